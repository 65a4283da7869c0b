import type { RunReport } from '@keel/core';
import { describe, expect, it } from 'vitest';
import type { Output } from './output.js';
import { renderEvent, reportLines } from './render.js';

function captured(): Output & { lines: string[] } {
  const lines: string[] = [];
  return { lines, out: (line) => lines.push(line), error: (line) => lines.push(line), colour: false };
}

/** A report of one quiet step, with `overrides`. */
function reportWith(overrides: Partial<RunReport>): RunReport {
  return {
    steps: 1,
    requests: { total: 1, byModel: {} },
    retries: { total: 0, model: 0, tool: 0, store: 0 },
    fallbacks: { total: 0, used: [] },
    breakerTransitions: [],
    corrections: { total: 0, byKind: {} },
    contextReductions: 0,
    toolCalls: { total: 0, errors: 0, byTool: {}, errorsByCode: {} },
    degradations: { total: 0, byTool: {} },
    errors: { total: 0, byCode: {} },
    guardrailsTripped: 0,
    waitingMs: 0,
    usage: { inputTokens: 0, outputTokens: 0 },
    durationMs: 0,
    ...overrides,
  };
}

describe('render: degraded tool results', () => {
  it('prints a tool-degraded event on one line', () => {
    const output = captured();
    renderEvent(
      {
        type: 'tool-degraded',
        runId: 'r',
        atMs: 0,
        step: 2,
        callIndex: 0,
        toolName: 'search',
        fallback: 'search_cache',
        errorCode: 'tool.timeout',
        reason: 'from the cache',
      },
      output,
    );
    expect(output.lines).toEqual(['step 2  ⇢ tool search degraded to search_cache after tool.timeout']);
  });

  it('adds a line counting degradations to the report, only when there were some', () => {
    const report = reportWith({ toolCalls: { total: 2, errors: 0, byTool: {}, errorsByCode: {} } });
    expect(reportLines(report).some((line) => line.startsWith('degraded'))).toBe(false);
    const degraded = { ...report, degradations: { total: 2, byTool: { search: 2 } } };
    expect(reportLines(degraded)).toContain('degraded 2 tool results (search ×2)');
  });
});

describe('render: handoffs', () => {
  it('prints a handoff event on one line, naming both agents', () => {
    const output = captured();
    renderEvent({ type: 'handoff', runId: 'r', atMs: 0, step: 1, from: 'triage', to: 'support' }, output);
    expect(output.lines).toEqual(['step 1  ⇢ handoff triage → support']);
  });
});

describe('render: reasoning tokens', () => {
  it('shows reasoning tokens only when a model counted them', () => {
    const report = reportWith({
      steps: 2,
      requests: { total: 2, byModel: { 'openai/o4-mini': 2 } },
      toolCalls: { total: 1, errors: 0, byTool: { lookup: 1 }, errorsByCode: {} },
      usage: { inputTokens: 50, outputTokens: 62 },
      durationMs: 40,
    });
    expect(reportLines(report)[2]).toContain('tokens in 50 out 62 · 40 ms');
    const reasoned = { ...report, usage: { ...report.usage, reasoningTokens: 48 } };
    expect(reportLines(reasoned)[2]).toContain('tokens in 50 out 62 (reasoning 48) · 40 ms');
  });
});

describe('render: prompt cache', () => {
  it('shows cached tokens, the hit rate and a fallback that lost the cache, only when a model reported them', () => {
    const report = reportWith({ usage: { inputTokens: 4_000, outputTokens: 10 } });
    expect(reportLines(report).some((line) => line.startsWith('cache'))).toBe(false);
    const cached = {
      ...report,
      usage: { inputTokens: 4_000, outputTokens: 10, cachedInputTokens: 3_000, cacheWriteInputTokens: 900 },
      promptCacheHitRate: 0.75,
      fallbacks: {
        total: 1,
        used: [
          {
            step: 3,
            from: 'a/x',
            to: 'b/y',
            errorCode: 'provider.overloaded' as const,
            promptCacheLost: true as const,
          },
        ],
      },
    };
    expect(reportLines(cached)).toContain(
      'cache    3000 input tokens read from the prompt cache (hit rate 75%), 900 written · lost by 1 fallback',
    );
  });
});

describe('render: calls whose outcome is unknown', () => {
  it('adds a line counting them to the report, only when there were some', () => {
    const report = reportWith({});
    expect(reportLines(report).some((line) => line.startsWith('unknown'))).toBe(false);
    const uncertain = {
      ...report,
      uncertainCalls: { total: 2, byTool: { create_ticket: 2 }, reconciled: 1, blocked: 1 },
    };
    expect(reportLines(uncertain)).toContain(
      'unknown  2 tool calls with an unknown outcome (create_ticket ×2) · repeats reconciled 1, not run 1',
    );
  });
});
