import { describe, expect, it } from 'vitest';
import { KeelError } from '../../errors/keel-error.js';
import { constant } from '../../policies/delays.js';
import { MemoryRunStore } from '../../store/memory-run-store.js';
import { FakeClock } from '../../testing/fake-clock.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { type Agent, agent } from '../agent.js';
import { migrateRunState } from '../durability/run-state-migrations.js';
import type { RunResult } from '../loop/run.js';
import { tool } from '../tools/tool.js';
import { EVENT_JOURNAL_LIMIT, journal, journalingListener } from './event-journal.js';
import { createRunState, type RunState } from './run-state.js';

const START_MS = 1_700_000_000_000;

const lookup = tool({
  name: 'lookup',
  description: 'Looks a city up',
  input: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  idempotent: true,
  execute: ({ city }: { city: string }) => `${city}: sunny`,
});

/** Runs (or resumes) on the fake clock, moving it on in 10 ms steps until the run settles. */
async function onClock(clock: FakeClock, running: Promise<RunResult>): Promise<RunResult> {
  let done = false;
  const settled = running.finally(() => {
    done = true;
  });
  while (!done) await clock.advance(10);
  return settled;
}

async function storedState(store: MemoryRunStore, runId: string): Promise<RunState> {
  return migrateRunState((await store.loadRun(runId))!.state);
}

function retriedThenFellBack(clock: FakeClock, store?: MemoryRunStore): Agent {
  return agent({
    name: 'weather',
    model: scriptedModel(
      [
        new KeelError('provider.rate_limited', 'slow down', { retryAfterMs: 2_000 }),
        new KeelError('provider.overloaded', 'busy'),
      ],
      { provider: 'scripted', model: 'primary' },
    ),
    fallbacks: [
      scriptedModel(
        [{ toolCalls: [{ name: 'lookup', arguments: { city: 'Oslo' } }] }, { content: 'Sunny in Oslo.' }],
        { provider: 'scripted', model: 'fallback' },
      ),
    ],
    tools: [lookup],
    retry: { maxAttempts: 2, delay: constant(250) },
    clock,
    ...(store === undefined ? {} : { store }),
  });
}

describe('the event journal of a durable run', () => {
  it('keeps each retry with its time and wait, the fallback, each model call and the end, in the stored state', async () => {
    const clock = new FakeClock(START_MS);
    const store = new MemoryRunStore();
    const result = await onClock(clock, retriedThenFellBack(clock, store).run('Weather in Oslo?'));
    expect(result.status).toBe('completed');
    const { journal: kept } = await storedState(store, result.runId);
    expect(kept?.dropped).toBe(0);
    expect(kept?.entries).toEqual([
      {
        type: 'model-call-end',
        atMs: START_MS,
        step: 1,
        name: 'scripted/primary',
        attempt: 1,
        durationMs: 0,
        status: 'error',
        code: 'provider.rate_limited',
      },
      {
        type: 'retry-scheduled',
        atMs: START_MS,
        step: 1,
        target: 'model',
        name: 'scripted/primary',
        attempt: 1,
        delayMs: 2_000,
        code: 'provider.rate_limited',
      },
      expect.objectContaining({
        type: 'model-call-end',
        atMs: START_MS + 2_000,
        attempt: 2,
        code: 'provider.overloaded',
      }),
      {
        type: 'fallback-used',
        atMs: START_MS + 2_000,
        step: 1,
        from: 'scripted/primary',
        to: 'scripted/fallback',
        code: 'provider.overloaded',
      },
      expect.objectContaining({
        type: 'model-call-end',
        step: 1,
        name: 'scripted/fallback',
        status: 'success',
      }),
      expect.objectContaining({
        type: 'model-call-end',
        step: 2,
        name: 'scripted/fallback',
        status: 'success',
      }),
      { type: 'run-ended', atMs: START_MS + 2_000, step: 2, status: 'completed', code: 'final_answer' },
    ]);
    // Only kinds, names, codes and numbers: no conversation.
    expect(JSON.stringify(kept)).not.toMatch(/Oslo|Sunny/);
  });

  it('records when an interrupted run stopped and when it was resumed', async () => {
    const clock = new FakeClock(START_MS);
    const store = new MemoryRunStore();
    const booking = tool({
      name: 'book',
      description: 'Books a room',
      input: { type: 'object', properties: {} },
      needsApproval: true,
      execute: () => 'booked',
    });
    const assistant = agent({
      model: scriptedModel([{ toolCalls: [{ name: 'book', arguments: {} }] }, { content: 'Booked.' }]),
      tools: [booking],
      store,
      clock,
    });
    const paused = await assistant.run('Book it');
    expect(paused.status).toBe('interrupted');
    await clock.advance(60_000);
    const key = paused.pending![0]!.idempotencyKey;
    const resumed = await assistant.resume(paused.runId, { approvals: { [key]: { approved: true } } });
    expect(resumed.status).toBe('completed');
    const entries = (await storedState(store, paused.runId)).journal!.entries;
    const pauses = entries.filter((entry) => entry.type === 'run-ended' || entry.type === 'run-resumed');
    expect(pauses).toEqual([
      { type: 'run-ended', atMs: START_MS, step: 1, status: 'interrupted', code: 'approval_required' },
      { type: 'run-resumed', atMs: START_MS + 60_000, step: 1, pausedSinceMs: START_MS },
      { type: 'run-ended', atMs: START_MS + 60_000, step: 2, status: 'completed', code: 'final_answer' },
    ]);
  });

  it('is not kept in a run without a store', async () => {
    const clock = new FakeClock(START_MS);
    const assistant = retriedThenFellBack(clock);
    const result = await onClock(clock, assistant.run('Weather in Oslo?'));
    expect(result.status).toBe('completed');
    expect(result.report.retries.model).toBe(1);
    expect(result.state.journal).toBeUndefined();
  });

  it(`keeps the last ${EVENT_JOURNAL_LIMIT} entries, dropping the oldest first and counting them`, () => {
    const state = createRunState({
      runId: 'r',
      agentName: 'a',
      messages: [],
      startedAtMs: 0,
      deadlineAtMs: 1,
    });
    for (let index = 0; index < EVENT_JOURNAL_LIMIT + 3; index++)
      journal(state, { type: 'context-reduced', atMs: index });
    expect(state.journal!.entries).toHaveLength(EVENT_JOURNAL_LIMIT);
    expect(state.journal!.entries[0]!.atMs).toBe(3);
    expect(state.journal!.entries.at(-1)!.atMs).toBe(EVENT_JOURNAL_LIMIT + 2);
    expect(state.journal!.dropped).toBe(3);
  });

  it('keeps names with their secrets redacted, and passes by the events a timeline does not need', () => {
    const state = createRunState({
      runId: 'r',
      agentName: 'a',
      messages: [],
      startedAtMs: 0,
      deadlineAtMs: 1,
    });
    const listen = journalingListener(state);
    listen({ type: 'text-delta', runId: 'r', atMs: 1, step: 1, delta: 'secret plans' });
    listen({ type: 'step-end', runId: 'r', atMs: 2, step: 1, toolCalls: 0 });
    expect(state.journal).toBeUndefined();
    listen({
      type: 'breaker-opened',
      runId: 'r',
      atMs: 3,
      target: 'model',
      name: 'openai/gpt-4o?api_key=sk-proj-abcdefghijklmnop0123456789',
    });
    expect(state.journal!.entries).toEqual([
      { type: 'breaker-opened', atMs: 3, target: 'model', name: expect.stringContaining('[redacted]') },
    ]);
    expect(JSON.stringify(state.journal)).not.toContain('abcdefghijklmnop');
  });
});
