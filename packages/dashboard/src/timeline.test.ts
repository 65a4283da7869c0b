import { agent, MemoryRunStore, migrateRunState, type RunRecord, tool } from '@keel/core';
import { scriptedModel } from '@keel/core/testing';
import { describe, expect, it } from 'vitest';
import { fallbackRun, interruptedRun } from './test-support/runs.js';
import { buildTimeline, type TimelineEntry } from './timeline.js';

async function stored(store: MemoryRunStore, runId: string) {
  const record = (await store.loadRun(runId)) as RunRecord;
  return { record, state: migrateRunState(record.state), ledger: await store.ledger(runId) };
}

const pick = (entries: TimelineEntry[], lane: TimelineEntry['lane']) =>
  entries.filter((entry) => entry.lane === lane);

describe('buildTimeline', () => {
  it('draws a retried, fallen-back run: the fallback on its step, the retry counted but not placed', async () => {
    const store = new MemoryRunStore();
    const { record, state, ledger } = await stored(store, await fallbackRun(store));
    const timeline = buildTimeline(record, state, ledger, Date.now());
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
    const corrections = pick(buildTimeline(record, state, ledger, Date.now()).entries, 'correction');
    expect(corrections).toEqual([
      expect.objectContaining({ label: 'correction: get_wether (tool.not_found)', step: 1, timing: 'step' }),
    ]);
  });
});
