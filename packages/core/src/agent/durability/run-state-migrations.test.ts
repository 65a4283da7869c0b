import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RUN_STATE_SCHEMA_VERSION } from '../run/run-state.js';
import { migrateRunState } from './run-state-migrations.js';

const V2 = JSON.parse(
  readFileSync(new URL('./fixtures/run-state-v2.json', import.meta.url), 'utf8'),
) as Record<string, Record<string, unknown>>;
const V1 = JSON.parse(
  readFileSync(new URL('./fixtures/run-state-v1.json', import.meta.url), 'utf8'),
) as Record<string, Record<string, unknown>>;

describe('run state migrations', () => {
  it('brings a version-1 state mid-step to the current version, leaving the stored value alone', () => {
    const stored = structuredClone(V1.midStep!);
    const state = migrateRunState(stored, 'v1-mid-step');
    expect(RUN_STATE_SCHEMA_VERSION).toBe(3);
    expect(state).toMatchObject({ schemaVersion: 3, phase: 'tools', pendingDecisions: [] });
    expect(state.pendingToolCalls.map((call) => [call.status, call.attempts])).toEqual([
      ['completed', 1],
      ['pending', 0],
    ]);
    expect(state.report.retries).toEqual({ total: 0, model: 0, tool: 0, store: 0 });
    expect(state.report.degradations).toEqual({ total: 0, byTool: {} });
    expect(stored).toEqual(V1.midStep);
  });

  it('brings a version-2 state to version 3: the report counts no degradation yet, nothing else changes', () => {
    for (const name of ['midStep', 'completed']) {
      const stored = structuredClone(V2[name]!);
      const state = migrateRunState(stored, String(stored.runId));
      const { report, schemaVersion, ...rest } = state as unknown as Record<string, unknown> & {
        report: Record<string, unknown>;
      };
      const { report: storedReport, schemaVersion: storedVersion, ...storedRest } = stored;
      expect([storedVersion, schemaVersion]).toEqual([2, 3]);
      expect(rest).toEqual(storedRest);
      expect(report).toEqual({ ...(storedReport as object), degradations: { total: 0, byTool: {} } });
      expect(stored).toEqual(V2[name]);
    }
  });

  it('moves an answer received but not settled to the answer phase', () => {
    expect(migrateRunState(V1.answerReceived)).toMatchObject({ phase: 'answer', finishReason: 'stop' });
  });

  it('rebuilds the pending calls version 1 dropped from an interrupted run', () => {
    const state = migrateRunState(V1.approvalInterrupted);
    expect(state.phase).toBe('tools');
    expect(state.pendingToolCalls.map((call) => [call.idempotencyKey, call.status])).toEqual([
      ['v1-approval:1:0', 'started'],
      ['v1-approval:1:1', 'pending'],
    ]);
    expect(state.pendingDecisions).toEqual([
      {
        kind: 'approval',
        idempotencyKey: 'v1-approval:1:1',
        toolName: 'send_mail',
        arguments: { to: 'ana@example.com' },
        step: 1,
        callIndex: 1,
      },
    ]);
  });

  it("refuses what is not a run state, a newer one, or another run's, with config.invalid", () => {
    const cases: Array<[unknown, RegExp]> = [
      [null, /is not an object/],
      [[], /is not an object/],
      [{}, /no valid schemaVersion/],
      [{ schemaVersion: 0 }, /no valid schemaVersion/],
      [
        { ...V1.midStep, schemaVersion: 7 },
        /schema version 7, newer than this keel understands \(3\): upgrade keel/,
      ],
      [{ ...V1.midStep, messages: 'none' }, /not a valid keel run state \(bad messages\)/],
      [{ ...V1.midStep, phase: 'dreaming' }, /bad phase/],
    ];
    for (const [stored, message] of cases) {
      expect(() => migrateRunState(stored, 'v1-mid-step')).toThrow(
        expect.objectContaining({ code: 'config.invalid', message: expect.stringMatching(message) }),
      );
    }
    expect(() => migrateRunState(V1.midStep, 'someone-else')).toThrow(/belongs to run v1-mid-step/);
  });
});
