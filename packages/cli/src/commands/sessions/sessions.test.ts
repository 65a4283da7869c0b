import { agent, MemoryRunStore } from '@keel/core';
import { scriptedModel } from '@keel/core/testing';
import { describe, expect, it } from 'vitest';
import type { Output } from '../../output/output.js';
import { showRun } from '../runs/runs.js';
import { showSession } from './sessions.js';

function captured(): Output & { lines: string[] } {
  const lines: string[] = [];
  return { lines, out: (line) => lines.push(line), error: (line) => lines.push(line), colour: false };
}

describe('keel sessions show', () => {
  it("shows what the session's runs cost, added up by model, in text and JSON", async () => {
    const store = new MemoryRunStore();
    const usage = { inputTokens: 1_000, outputTokens: 500 };
    const mini = scriptedModel(() => ({ content: 'ok', usage }), {
      provider: 'openai',
      model: 'gpt-4.1-mini',
    });
    const big = scriptedModel(() => ({ content: 'ok', usage }), { provider: 'openai', model: 'gpt-4.1' });
    const first = await agent({ name: 'desk', model: mini, store }).run('hi', { sessionId: 'trip-1' });
    const second = await agent({ name: 'desk', model: big, store }).run('again', { sessionId: 'trip-1' });
    const text = captured();
    expect(await showSession(store, 'trip-1', false, text)).toBe(0);
    // gpt-4.1-mini: 0.4 and 1.6 dollars per million (0.0012); gpt-4.1: 2 and 8 (0.006).
    expect(text.lines).toContain(
      'cost     $0.007200 over 2 runs (openai/gpt-4.1-mini $0.001200, openai/gpt-4.1 $0.006000)',
    );
    const json = captured();
    await showSession(store, 'trip-1', true, json);
    const shown = JSON.parse(json.lines.join('\n'));
    expect(shown.turns).toHaveLength(2);
    expect(shown.cost).toEqual({
      totalUsd: first.report.cost!.totalUsd + second.report.cost!.totalUsd,
      byModel: {
        'openai/gpt-4.1-mini': first.report.cost!.totalUsd,
        'openai/gpt-4.1': second.report.cost!.totalUsd,
      },
      unpricedCalls: 0,
      runs: [
        { runId: first.runId, totalUsd: first.report.cost!.totalUsd },
        { runId: second.runId, totalUsd: second.report.cost!.totalUsd },
      ],
    });
    // A run on the session shows the session's total beside its own cost.
    const run = captured();
    await showRun(store, first.runId, { json: false }, run);
    expect(run.lines).toContain('session  trip-1 · cost $0.007200 over 2 runs (keel sessions show trip-1)');
    const runJson = captured();
    await showRun(store, first.runId, { json: true }, runJson);
    expect(JSON.parse(runJson.lines.join('\n')).session).toEqual({
      sessionId: 'trip-1',
      totalUsd: shown.cost.totalUsd,
      runs: 2,
    });
  });
});
