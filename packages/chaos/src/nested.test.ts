// The nested scenarios over real HTTP: a keel parent agent whose one tool is a child agent (agentTool), the child
// meeting the faults on models of its own. What the parent's model reads of a child that fails is counted from the
// requests the simulated server received. (The crash leg, which needs a durable store in a worker process, is tested
// through the CLI: packages/cli/src/commands/chaos/chaos.test.ts.)
import { agent, constant, tool } from '@keel/core';
import { describe, expect, it } from 'vitest';
import { childErrorsSeen } from './child-errors.js';
import { type EffectRecord, effectsThatHappened } from './effect-ledger.js';
import { keelSubject } from './keel-subject.js';
import { renderTable } from './render-table.js';
import { runChaos } from './run-chaos.js';
import type { ChaosScenario } from './scenario.js';
import { chaosRunOf } from './seeds.js';
import { CHILD_TOOL } from './subject.js';

const weather = tool({
  name: 'get_weather',
  description: 'Current weather for a city',
  input: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
  idempotent: true,
  timeoutMs: 5_000,
  execute: ({ city }: { city: string }) => `Sunny in ${city}`,
});

const ticket = tool({
  name: 'create_ticket',
  description: 'Opens a ticket with a title',
  input: {
    type: 'object',
    properties: { title: { type: 'string' } },
    required: ['title'],
    additionalProperties: false,
  },
  execute: ({ title }: { title: string }) => ({ ticket: `T-${title.length}`, title }),
});

/** A keel agent: the child on the child's models with the tools, the parent with the agent tool (`childTool`). */
function keel(maxAttempts: number) {
  return keelSubject({
    build: ({ models: [model, ...fallbacks], environment, childTool }) => ({
      agent: agent({
        model,
        fallbacks,
        tools: childTool === undefined ? environment.instrumentTools([weather, ticket]) : [childTool],
        // Short waits, so that the retries of a small run take milliseconds.
        retry: { maxAttempts, delay: constant(5) },
      }),
    }),
  });
}

const TASK = 'What is the weather in Paris? Open a ticket titled Paris trip with low priority.';

/** The child's model answers 503 to every request: the child cannot finish, whatever it does. */
const CHILD_DOWN: ChaosScenario = {
  name: 'nested-child-down',
  title: "the child agent's model is down",
  description: "Every request to the child agent's model gets 503; the parent's model is healthy.",
  child: { rates: { unavailable: 1 } },
  arrivalMs: 100,
  minimum: 'clean',
  goals: ['duplicates', 'typed'],
};

describe('the nested scenarios', () => {
  it('runs keel nested through faults in the child: every run completes, nothing runs twice', async () => {
    const report = await runChaos({
      subjects: [keel(6)],
      task: TASK,
      scenarios: ['nested'],
      runs: 6,
      seed: 3,
    });
    expect(report.subjects[0]).toMatchObject({
      calibration: { requestsPerRun: 2, effectsPerRun: 2 },
      // The parent's request, the child's two, the parent's answer.
      nestedCalibration: { requestsPerRun: 4, effectsPerRun: 2 },
    });
    const [card] = report.scorecards;
    expect(card).toMatchObject({ scenario: 'nested', runs: 6, completed: 6, untyped: 0, hung: 0 });
    expect(card!.duplicateSideEffects).toBe(0);
    expect(card!.childErrors).toEqual({ typed: 0, untyped: 0 });
    // The faults met the child's models only: the parent's model answered every request.
    expect(Object.keys(card!.requests.byModel).sort()).toEqual(['sim-child', 'sim-primary']);
    expect(card!.requests.byModel['sim-primary']).toBe(12);
    expect(card!.requests.byModel['sim-child']).toBeGreaterThan(12);
    expect(renderTable(report)).toMatch(/child errors typed\/untyped/);
  }, 60_000);

  it('runs keel with a handoff to the child: the child answers, through its faults, nothing runs twice', async () => {
    const report = await runChaos({
      subjects: [keel(6)],
      task: TASK,
      scenarios: ['nested-handoff'],
      runs: 6,
      seed: 3,
    });
    // The parent's request (it hands over), then the child's two: the child's answer is the run's.
    expect(report.subjects[0]).toMatchObject({ handoffCalibration: { requestsPerRun: 3, effectsPerRun: 2 } });
    const [card] = report.scorecards;
    expect(card).toMatchObject({ scenario: 'nested-handoff', runs: 6, completed: 6, untyped: 0, hung: 0 });
    expect(card!.duplicateSideEffects).toBe(0);
    expect(card!.requests.byModel['sim-primary']).toBe(6);
  }, 60_000);

  it("gives the parent's model a child that fails as a typed tool error, and every run ends typed", async () => {
    // One attempt per request: at most 9 requests reach the child's model, below the 10 failures that open its
    // breaker (a run waiting for an open breaker's probe would outlast the test).
    const report = await runChaos({
      subjects: [keel(1)],
      task: TASK,
      scenarios: [CHILD_DOWN],
      runs: 3,
      seed: 1,
    });
    const [card] = report.scorecards;
    expect(card).toMatchObject({ runs: 3, completed: 0, untyped: 0, hung: 0, duplicateSideEffects: 0 });
    // Each run's parent read the child's failure with its code (and may have asked the child again).
    expect(card!.childErrors!.typed).toBeGreaterThanOrEqual(3);
    expect(card!.childErrors!.untyped).toBe(0);
    // The parent answered without the child's part: the answer lacks it, and says so.
    expect(card!.failuresByCode).toEqual({ 'answer.incomplete': 3 });
  }, 60_000);

  it('tells typed from untyped child failures in the requests the parent sent', () => {
    const request = (content: string) => ({
      path: '/v1/chat/completions',
      model: 'sim-primary',
      body: {
        messages: [
          { role: 'user', content: TASK },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_1', function: { name: CHILD_TOOL.name } }],
          },
          { role: 'tool', tool_call_id: 'call_1', content },
        ],
      },
    });
    const requests = [
      request('{"status":"error","error":{"code":"provider.unavailable","message":"down"}}'),
      request('An error occurred while running the tool. Please try again. Error: 503'),
      request('{"status":"success","content":"Here is what I found: ..."}'),
      request('Here is what I found: create_ticket failed with an error'),
      { ...request('An error occurred'), model: 'sim-child' },
    ] as unknown as Parameters<typeof childErrorsSeen>[0];
    expect(childErrorsSeen(requests, ['sim-primary'], CHILD_TOOL.name)).toEqual({ typed: 1, untyped: 1 });
  });

  it("counts a child run's effects in the chaos run that started it", () => {
    expect(chaosRunOf('chaos-nested-1-4')).toBe('chaos-nested-1-4');
    expect(chaosRunOf('chaos-nested-1-4:1:0/travel_desk')).toBe('chaos-nested-1-4');
  });

  it("counts an effect a killed execution left unrecorded once the tool's reconcile found it", () => {
    const effect = (phase: EffectRecord['phase'], idempotencyKey: string): EffectRecord => ({
      phase,
      runId: phase === 'found' ? '' : 'chaos-nested-crash-1-0',
      tool: 'create_ticket',
      key: '',
      idempotent: false,
      idempotencyKey,
      atMs: 0,
    });
    const killed = effect('started', 'a');
    const unfound = effect('started', 'b');
    expect(effectsThatHappened([killed, unfound, effect('found', 'a')])).toEqual([killed]);
    expect(effectsThatHappened([killed, effect('absent', 'a')])).toEqual([]);
  });
});
