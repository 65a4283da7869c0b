import { describe, expect, it } from 'vitest';
import { KeelError } from '../../errors/keel-error.js';
import { constant } from '../../policies/delays.js';
import { retryBudget } from '../../policies/retry-budget.js';
import { FakeClock } from '../../testing/fake-clock.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { type Agent, agent } from '../agent.js';
import type { AgentRetryOptions } from '../agent-options.js';
import { tool } from '../tools/tool.js';
import { combineBudgets } from './budget.js';
import type { RunResult } from './run.js';

/** A seeded generator (mulberry32): the same faults on every test run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const FAULT_RATE = 0.3;
const TOOL_STEPS = 6;

/** An agent whose model and tool each fail 30% of their calls with a retryable fault; counts what they received. */
function faultyAgent(clock: FakeClock, seed: number, retry: AgentRetryOptions) {
  const random = seeded(seed);
  const received = { model: 0, tool: 0 };
  const model = scriptedModel((request) => {
    received.model++;
    if (random() < FAULT_RATE) return new KeelError('provider.overloaded', 'overloaded');
    const turns = request.messages.filter((message) => message.role === 'assistant').length;
    return turns < TOOL_STEPS ? { toolCalls: [{ name: 'lookup' }] } : { content: 'done' };
  });
  const lookup = tool({
    name: 'lookup',
    description: 'looks something up',
    input: { type: 'object' },
    idempotent: true,
    execute: () => {
      received.tool++;
      if (random() < FAULT_RATE) throw new KeelError('tool.timeout', 'slow backend');
      return 'found';
    },
  });
  const assistant = agent({
    model,
    tools: [lookup],
    clock,
    limits: { maxTurns: 50 },
    retry: { maxAttempts: 6, toolMaxAttempts: 6, delay: constant(10), ...retry },
  });
  return { assistant, received };
}

function runOnClock(clock: FakeClock, assistant: Agent): Promise<RunResult> {
  return clock.runUntilSettled(assistant.run('go'));
}

describe('retry budget: one per run, shared by every layer', () => {
  it('caps model and tool retries together under a 30% fault rate, and the report counts what the server got', async () => {
    const maxRetries = 4;
    let budgetHit = 0;
    let unbudgetedRetries = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const clock = new FakeClock();
      const { assistant, received } = faultyAgent(clock, seed, { runBudget: { maxRetries, ratio: false } });
      const result = await runOnClock(clock, assistant);
      const { report } = result;

      expect(report.retries.total).toBeLessThanOrEqual(maxRetries);
      expect(report.retries.total).toBe(report.retries.model + report.retries.tool);
      // What the providers received is what the report counts: originals plus granted retries, nothing else.
      expect(report.requests.total).toBe(received.model);
      expect(received.model).toBe(report.steps + report.retries.model);
      expect(received.tool).toBe(report.toolCalls.total + report.retries.tool);
      expect(received.model + received.tool).toBeLessThanOrEqual(
        report.steps + report.toolCalls.total + maxRetries,
      );
      if (report.retries.total === maxRetries) budgetHit++;

      const freeClock = new FakeClock();
      const free = faultyAgent(freeClock, seed, { runBudget: { maxRetries: 1_000, ratio: false } });
      unbudgetedRetries += (await runOnClock(freeClock, free.assistant)).report.retries.total;
    }
    // The cap was reached in many runs: without it, the same faults would have cost more retries.
    expect(budgetHit).toBeGreaterThan(5);
    expect(unbudgetedRetries).toBeGreaterThan(budgetHit * maxRetries);
  });

  it('ends a step whose model retries are refused with policy.budget_exhausted', async () => {
    const clock = new FakeClock();
    const model = scriptedModel([
      new KeelError('provider.overloaded', 'a'),
      new KeelError('provider.overloaded', 'b'),
    ]);
    const assistant = agent({
      model,
      clock,
      retry: { delay: constant(10), runBudget: { maxRetries: 1, ratio: false } },
    });
    const result = await runOnClock(clock, assistant);
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('policy.budget_exhausted');
    expect(result.error?.cause).toMatchObject({ code: 'provider.overloaded' });
    expect(model.calls).toHaveLength(2);
  });

  it('draws from a shared budget too: runs together never retry more than it allows', async () => {
    const clock = new FakeClock();
    const shared = retryBudget({ maxRetries: 5, ratio: false, clock });
    let total = 0;
    for (let seed = 1; seed <= 6; seed++) {
      const { assistant } = faultyAgent(clock, seed, { budget: shared });
      total += (await runOnClock(clock, assistant)).report.retries.total;
    }
    expect(total).toBe(5);
    expect(shared.snapshot().spent).toBe(5);
  });

  it('combines budgets so that a refusal by either takes from neither', () => {
    const clock = new FakeClock();
    const run = retryBudget({ maxRetries: 2, ratio: false, clock });
    const shared = retryBudget({ maxRetries: 1, ratio: false, clock });
    const both = combineBudgets(run, shared);
    expect(both.tryAcquireRetry()).toBe(true);
    expect(both.tryAcquireRetry()).toBe(false);
    expect(run.snapshot().spent).toBe(1);
    expect(shared.snapshot().spent).toBe(1);
    expect(combineBudgets(run, undefined)).toBe(run);
  });
});
