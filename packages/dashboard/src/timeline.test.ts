import {
  agent,
  MemoryRunStore,
  migrateRunState,
  queuedRun,
  type RunEvent,
  type RunRecord,
  type RunState,
  readQueuedState,
  tool,
} from '@keel/core';
import { FakeClock, scriptedModel } from '@keel/core/testing';
import { simulated } from '@keel/simulated';
import { describe, expect, it } from 'vitest';
import { queuedTimeline } from './queued-timeline.js';
import { fallbackRun, interruptedRun } from './test-support/runs.js';
import { buildTimeline, type TimelineEntry } from './timeline.js';

async function stored(store: MemoryRunStore, runId: string) {
  const record = (await store.loadRun(runId)) as RunRecord;
  return { record, state: migrateRunState(record.state), ledger: await store.ledger(runId) };
}

/** The state as a keel without the journal saved it. */
function older(state: RunState): RunState {
  delete state.journal;
  return state;
}

const pick = (entries: TimelineEntry[], lane: TimelineEntry['lane']) =>
  entries.filter((entry) => entry.lane === lane);

describe('buildTimeline', () => {
  it('draws a retried, fallen-back run saved without a journal: the fallback on its step, the retry counted', async () => {
    const store = new MemoryRunStore();
    const { record, state, ledger } = await stored(store, await fallbackRun(store));
    const timeline = buildTimeline(record, older(state), ledger, Date.now());
    expect(pick(timeline.entries, 'retry')).toEqual([
      expect.objectContaining({
        label: '1 retry (model 1)',
        detail: 'waited 0 ms in all',
        timing: 'not-stored',
      }),
    ]);
    expect(pick(timeline.entries, 'fallback')).toEqual([
      expect.objectContaining({
        label: 'fallback scripted/primary → scripted/fallback',
        detail: 'after provider.overloaded',
        step: 1,
        timing: 'step',
      }),
    ]);
    expect(pick(timeline.entries, 'model').map((entry) => [entry.label, entry.detail])).toEqual([
      ['model call · step 1', 'scripted/primary → scripted/fallback'],
      ['model call · step 2', 'scripted/fallback'],
    ]);
    expect(pick(timeline.entries, 'tool')).toEqual([
      expect.objectContaining({ label: 'get_weather · step 1 call 0', timing: 'exact', outcome: 'ok' }),
    ]);
    expect(timeline.notes.join(' ')).toMatch(/store keeps no time or step for each one/);
  });

  it('places model windows between the stored tool call times', async () => {
    const store = new MemoryRunStore();
    const { record, state, ledger } = await stored(store, await fallbackRun(store));
    older(state);
    state.startedAtMs = 1_000;
    state.endedAtMs = 1_100;
    state.checkpointedAtMs = 1_100;
    const [call] = ledger;
    call!.startedAtMs = 1_040;
    call!.completedAtMs = 1_060;
    const timeline = buildTimeline(record, state, ledger, 5_000);
    const spans = (lane: TimelineEntry['lane']) =>
      pick(timeline.entries, lane).map((entry) => [entry.startMs, entry.endMs]);
    expect(timeline.durationMs).toBe(100);
    expect(spans('model')).toEqual([
      [0, 40],
      [60, 100],
    ]);
    expect(spans('fallback')).toEqual([[0, 40]]);
    expect(spans('tool')).toEqual([[40, 60]]);
    expect(spans('checkpoint')).toEqual([[100, 100]]);
    expect(spans('retry')).toEqual([[0, 100]]);
    const starts = timeline.entries.map((entry) => entry.startMs);
    expect(starts).toEqual([...starts].sort((left, right) => left - right));
  });

  it('shows what an interrupted run waits for, and a call that may have run as waiting', async () => {
    const store = new MemoryRunStore();
    const { runId } = await interruptedRun(store, { title: 'printer on fire' });
    const { record, state } = await stored(store, runId);
    state.endedAtMs = state.startedAtMs + 30;
    const started = [
      {
        runId,
        idempotencyKey: `${runId}:1:0`,
        step: 1,
        callIndex: 0,
        toolName: 'create_ticket',
        status: 'started' as const,
        startedAtMs: state.startedAtMs + 10,
      },
    ];
    const timeline = buildTimeline(record, state, started, state.startedAtMs + 50);
    expect(pick(timeline.entries, 'interruption')).toEqual([
      expect.objectContaining({
        label: 'waiting: approval_required',
        detail: 'create_ticket (approval)',
        startMs: 30,
        endMs: 50,
      }),
    ]);
    expect(pick(timeline.entries, 'tool')).toEqual([
      expect.objectContaining({
        outcome: 'waiting',
        startMs: 10,
        endMs: 50,
        detail: expect.stringMatching(/may or may not have run/),
      }),
    ]);
  });

  it('places a correction on the step whose tool call was sent back', async () => {
    const store = new MemoryRunStore();
    const weather = tool({
      name: 'get_weather',
      description: 'Current weather for a city',
      input: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      execute: async () => ({ temperatureC: 20 }),
    });
    const result = await agent({
      model: scriptedModel([
        { toolCalls: [{ name: 'get_wether', arguments: { city: 'Oslo' } }] },
        { toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] },
        { content: 'Mild.' },
      ]),
      tools: [weather],
      store,
    }).run('Weather in Oslo?');
    const { record, state, ledger } = await stored(store, result.runId);
    const corrections = pick(buildTimeline(record, older(state), ledger, Date.now()).entries, 'correction');
    expect(corrections).toEqual([
      expect.objectContaining({ label: 'correction: get_wether (tool.not_found)', step: 1, timing: 'step' }),
    ]);
  });

  it("places a retry at its time with its wait as a span, and the fallback at its moment, from the run's journal", async () => {
    const clock = new FakeClock(1_000_000);
    const primary = simulated({
      faults: { sequence: ['rate_limit', 'overloaded'], retryAfterMs: 1_500 },
    });
    const fallback = primary.withModel('sim-fallback', { faults: { sequence: [] } });
    const store = new MemoryRunStore();
    const weather = tool({
      name: 'get_weather',
      description: 'Current weather for a city',
      input: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      idempotent: true,
      execute: async () => ({ temperatureC: 20 }),
    });
    let retried = false;
    try {
      const running = agent({
        name: 'weather',
        model: primary,
        fallbacks: [fallback],
        tools: [weather],
        retry: { maxAttempts: 2 },
        store,
        clock,
      }).run('Weather in Paris?', {
        onEvent: (event: RunEvent) => {
          if (event.type === 'retry-scheduled') retried = true;
        },
      });
      // Real HTTP to the simulated server; time moves only here: the retry's wait, then nothing.
      while (!retried) await clock.advance(0);
      await clock.advance(1_500);
      const result = await clock.runUntilSettled(running, { stepMs: 0 });
      expect(result.status).toBe('completed');
      const { record, state, ledger } = await stored(store, result.runId);
      const timeline = buildTimeline(record, state, ledger, clock.now());
      expect(pick(timeline.entries, 'retry')).toEqual([
        {
          lane: 'retry',
          label: 'retry of simulated/sim-primary (model)',
          detail: 'after provider.rate_limited on attempt 1, waited 1500 ms',
          step: 1,
          startMs: 0,
          endMs: 1_500,
          timing: 'exact',
          outcome: 'error',
        },
      ]);
      expect(pick(timeline.entries, 'fallback')).toEqual([
        expect.objectContaining({
          label: 'fallback simulated/sim-primary → simulated/sim-fallback',
          detail: 'after provider.overloaded',
          step: 1,
          startMs: 1_500,
          endMs: 1_500,
          timing: 'exact',
        }),
      ]);
      const models = pick(timeline.entries, 'model');
      expect(models.map((entry) => [entry.label, entry.startMs, entry.timing, entry.outcome])).toEqual([
        ['model call · step 1', 0, 'exact', 'error'],
        ['model call · step 1 attempt 2', 1_500, 'exact', 'error'],
        ['model call · step 1', 1_500, 'exact', 'ok'],
        ['model call · step 2', 1_500, 'exact', 'ok'],
      ]);
      expect(timeline.entries.some((entry) => entry.timing !== 'exact')).toBe(false);
      expect(timeline.notes.join(' ')).toMatch(/at the times the run's journal recorded/);
      expect(timeline.notes.join(' ')).not.toMatch(/store keeps no time/);
    } finally {
      await primary.close();
    }
  });

  it('draws the wait of an interrupted run that was resumed, from its journal', async () => {
    const store = new MemoryRunStore();
    const { runId, key, agent: support } = await interruptedRun(store, { title: 'printer on fire' });
    await support.resume(runId, { approvals: { [key]: { approved: true } } });
    const { record, state, ledger } = await stored(store, runId);
    const ended = state.journal!.entries.find((entry) => entry.type === 'run-ended')!;
    const resumed = state.journal!.entries.find((entry) => entry.type === 'run-resumed')!;
    // Moved apart: the run waited 40 s for its approval.
    resumed.atMs = ended.atMs + 40_000;
    resumed.pausedSinceMs = ended.atMs;
    state.endedAtMs = resumed.atMs + 10;
    const timeline = buildTimeline(record, state, ledger, state.endedAtMs);
    expect(pick(timeline.entries, 'interruption')).toEqual([
      expect.objectContaining({
        label: 'waited: approval_required, then resumed',
        startMs: ended.atMs - state.startedAtMs,
        endMs: ended.atMs - state.startedAtMs + 40_000,
        timing: 'exact',
      }),
    ]);
  });

  it('counts what a partial journal misses, and says its oldest events were dropped', async () => {
    const store = new MemoryRunStore();
    const { record, state, ledger } = await stored(store, await fallbackRun(store));
    state.journal!.entries = state.journal!.entries.filter((entry) => entry.type !== 'retry-scheduled');
    state.journal!.dropped = 1;
    const timeline = buildTimeline(record, state, ledger, Date.now());
    expect(pick(timeline.entries, 'retry')).toEqual([
      expect.objectContaining({ label: '1 earlier retry not in the journal', timing: 'not-stored' }),
    ]);
    expect(timeline.notes.join(' ')).toMatch(/1 earlier one was dropped/);
  });

  it('draws a run cancelled while queued up to its cancellation, saying nothing of it ran', async () => {
    const store = new MemoryRunStore();
    await store.createRun(queuedRun({ runId: 'q', agentName: 'support', input: 'go', nowMs: 1_000 }));
    await store.requestCancellation('q', 'not needed', 4_000);
    const record = (await store.loadRun('q'))!;
    const timeline = queuedTimeline(record, readQueuedState(record.state)!, 60_000);
    expect(timeline).toEqual({
      startedAtMs: 1_000,
      durationMs: 3_000,
      entries: [
        {
          lane: 'queue',
          label: 'cancelled before a worker started it',
          detail: 'agent support',
          startMs: 0,
          endMs: 3_000,
          timing: 'exact',
          outcome: 'info',
        },
      ],
      notes: ['No worker started it: nothing of it ran.'],
    });
  });

  it("begins a run a worker took from the queue with its wait, and places the run's steps after it", async () => {
    const clock = new FakeClock(10_000);
    const store = new MemoryRunStore();
    await store.createRun(queuedRun({ runId: 'q', agentName: 'weather', input: 'Paris?', nowMs: 4_000 }));
    const result = await agent({
      name: 'weather',
      model: scriptedModel([{ content: 'Sunny.' }]),
      store,
      clock,
    }).resume('q');
    expect(result.status).toBe('completed');
    const { record, state, ledger } = await stored(store, 'q');
    const timeline = buildTimeline(record, older(state), ledger, clock.now());
    expect(timeline.startedAtMs).toBe(4_000);
    expect(timeline.durationMs).toBe(6_000);
    expect(pick(timeline.entries, 'queue')).toEqual([
      expect.objectContaining({ label: 'queued: waited for a worker', startMs: 0, endMs: 6_000 }),
    ]);
    expect(pick(timeline.entries, 'run')).toEqual([
      expect.objectContaining({ startMs: 6_000, endMs: 6_000 }),
    ]);
    expect(pick(timeline.entries, 'model')).toEqual([
      expect.objectContaining({ startMs: 6_000, endMs: 6_000 }),
    ]);
  });
});
