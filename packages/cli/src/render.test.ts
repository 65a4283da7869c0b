import type { RunReport } from '@keel/core';
import { describe, expect, it } from 'vitest';
import { reportLines } from './render.js';

const report: RunReport = {
  steps: 2,
  requests: { total: 2, byModel: { 'openai/o4-mini': 2 } },
  retries: { total: 0, model: 0, tool: 0, store: 0 },
  fallbacks: { total: 0, used: [] },
  breakerTransitions: [],
  corrections: { total: 0, byKind: {} },
  contextReductions: 0,
  toolCalls: { total: 1, errors: 0, byTool: { lookup: 1 }, errorsByCode: {} },
  errors: { total: 0, byCode: {} },
  guardrailsTripped: 0,
  waitingMs: 0,
  usage: { inputTokens: 50, outputTokens: 62 },
  durationMs: 40,
};

describe('reportLines', () => {
  it('shows reasoning tokens only when a model counted them', () => {
    expect(reportLines(report)[2]).toContain('tokens in 50 out 62 · 40 ms');
    const reasoned = { ...report, usage: { ...report.usage, reasoningTokens: 48 } };
    expect(reportLines(reasoned)[2]).toContain('tokens in 50 out 62 (reasoning 48) · 40 ms');
  });
});
