import { describe, expect, it } from 'vitest';
import { KeelError } from '../../errors/keel-error.js';
import { constant } from '../../policies/delays.js';
import { FakeClock } from '../../testing/fake-clock.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { agent } from '../agent.js';
import { guardrail } from '../guardrails/guardrail.js';
import { tool } from '../tools/tool.js';
import { RunAbort, RunRegistry, runRegistry } from './cancellation.js';
import { DEFAULT_LIMITS, resolveLimits } from './limits.js';

const emptyInput = { type: 'object', properties: {}, additionalProperties: false } as const;

function loopingModel() {
  return scriptedModel(() => ({
    toolCalls: [{ name: 'noop' }],
    usage: { inputTokens: 100, outputTokens: 20 },
  }));
}

const noop = tool({ name: 'noop', description: 'does nothing', input: emptyInput, execute: () => 'ok' });

describe('limits', () => {
  it('ends a run that keeps calling tools with run.max_turns', async () => {
    const model = loopingModel();
    const result = await agent({ model, tools: [noop], limits: { maxTurns: 3 } }).run('loop');
    expect(result.status).toBe('failed');
    expect(result.stopReason).toBe('max_turns');
    expect(result.error?.code).toBe('run.max_turns');
    expect(result.error?.data).toEqual({ maxTurns: 3, steps: 3 });
    expect(model.calls).toHaveLength(3);
    expect(result.report.steps).toBe(3);
    expect(result.report.toolCalls.total).toBe(3);
  });

  it('ends a run over its token budget with run.token_budget, before running more tools', async () => {
    const model = loopingModel();
    let calls = 0;
    const counting = tool({ name: 'noop', description: 'counts', input: emptyInput, execute: () => calls++ });
    const result = await agent({ model, tools: [counting], limits: { maxTokens: 250 } }).run('loop');
    expect(result.status).toBe('failed');
    expect(result.stopReason).toBe('token_budget');
    expect(result.error?.code).toBe('run.token_budget');
    expect(result.error?.data).toEqual({ maxTokens: 250, spentTokens: 360 });
    expect(model.calls).toHaveLength(3);
    expect(calls).toBe(2);
    expect(result.usage).toEqual({ inputTokens: 300, outputTokens: 60 });
  });

  it('times the whole run out with run.timeout, aborting the model call in flight', async () => {
    const clock = new FakeClock();
    const signals: AbortSignal[] = [];
    const model = scriptedModel((request) => {
      signals.push(request.signal);
      return new Promise(() => {});
    });
    const pending = agent({ model, clock, limits: { timeoutMs: 5_000 } }).run('hang');
    await clock.advance(5_000);
    const result = await pending;
    expect(result.status).toBe('failed');
    expect(result.stopReason).toBe('timeout');
    expect(result.error?.code).toBe('run.timeout');
    expect(result.report.durationMs).toBe(5_000);
    expect(signals[0]!.aborted).toBe(true);
    expect(clock.pendingTimers).toBe(0);
  });

  it('times the run out during a retry wait', async () => {
    const clock = new FakeClock();
    const model = scriptedModel([new KeelError('provider.overloaded', 'busy'), { content: 'too late' }]);
    const pending = agent({
      model,
      clock,
      limits: { timeoutMs: 1_000 },
      retry: { delay: constant(30_000) },
    }).run('hi');
    await clock.advance(1_000);
    const result = await pending;
    expect(result.error?.code).toBe('run.timeout');
    expect(model.calls).toHaveLength(1);
  });

  it('ends the run at its timeout even when a callback never returns', async () => {
    const clock = new FakeClock();
    const stuck = guardrail({ name: 'stuck', stage: 'input', check: () => new Promise(() => {}) });
    const model = scriptedModel([{ content: 'never' }]);
    const pending = agent({ model, clock, guardrails: [stuck], limits: { timeoutMs: 2_000 } }).run('hi');
    await clock.advance(2_000);
    const result = await pending;
    expect(result.error?.code).toBe('run.timeout');
    expect(model.calls).toHaveLength(0);
  });

  it('checks each limit it is given', () => {
    expect(resolveLimits(undefined, 'agent')).toBe(DEFAULT_LIMITS);
    expect(resolveLimits({ maxTurns: 5 }, 'agent')).toEqual({ ...DEFAULT_LIMITS, maxTurns: 5 });
    expect(() => resolveLimits({ maxParallelToolCalls: 1.5 }, 'agent')).toThrow(
      /maxParallelToolCalls must be an integer/,
    );
    expect(() => resolveLimits({ maxTokens: 0 }, 'agent')).toThrow(
      /maxTokens must be a number of tokens above 0/,
    );
    expect(() => resolveLimits(7 as never, 'agent')).toThrow(/limits must be an object/);
  });
});

describe('cancellation', () => {
  function blockingTool(seen: { signal?: AbortSignal; abortedAtMs?: number }, clock: FakeClock) {
    return tool({
      name: 'work',
      description: 'works until told to stop',
      input: emptyInput,
      timeoutMs: 600_000,
      execute: (_input, context) =>
        new Promise((_resolve, reject) => {
          seen.signal = context.signal;
          context.signal.addEventListener('abort', () => {
            seen.abortedAtMs = clock.now();
            reject(context.signal.reason);
          });
        }),
    });
  }

  it.each(['signal', 'registry', 'agent'] as const)(
    'cancelled through the %s during a tool call: the tool is told at once and the run ends as cancelled',
    async (how) => {
      const clock = new FakeClock();
      const seen: { signal?: AbortSignal; abortedAtMs?: number } = {};
      const model = scriptedModel([{ toolCalls: [{ name: 'work' }] }, { content: 'not asked' }]);
      const assistant = agent({ model, clock, tools: [blockingTool(seen, clock)] });
      const controller = new AbortController();
      const runId = `cancel-${how}`;
      const pending = assistant.run('work', { signal: controller.signal, runId });
      await clock.advance(1_000);
      expect(seen.signal?.aborted).toBe(false);

      const cancelledAtMs = clock.now();
      if (how === 'signal') controller.abort(new Error('user left'));
      else if (how === 'registry') expect(runRegistry.cancel(runId, 'stop pressed')).toBe(true);
      else expect(assistant.cancel(runId)).toBe(true);
      let settled = false;
      void pending.then(() => (settled = true));
      await clock.advance(50);

      expect(settled).toBe(true);
      const result = await pending;
      expect(seen.abortedAtMs! - cancelledAtMs).toBeLessThanOrEqual(50);
      expect(result.status).toBe('cancelled');
      expect(result.stopReason).toBe('cancelled');
      expect(result.error?.code).toBe('run.cancelled');
      expect(model.calls).toHaveLength(1);
      expect(result.report.errors.byCode).toEqual({ 'run.cancelled': 1 });
      expect(runRegistry.isRunning(runId)).toBe(false);
      expect(assistant.cancel(runId)).toBe(false);
    },
  );

  it('keeps the cancellation reason as the error cause', async () => {
    const controller = new AbortController();
    const reason = new Error('shutting down');
    controller.abort(reason);
    const model = scriptedModel([{ content: 'never' }]);
    const result = await agent({ model }).run('hi', { signal: controller.signal });
    expect(result.status).toBe('cancelled');
    expect(result.error?.cause).toBe(reason);
    expect(model.calls).toHaveLength(0);
  });

  it('cancels many runs sharing one signal, through one listener', async () => {
    const controller = new AbortController();
    const model = scriptedModel(() => new Promise(() => {}));
    const assistant = agent({ model });
    const runs = Array.from({ length: 50 }, () => assistant.run('wait', { signal: controller.signal }));
    controller.abort();
    const results = await Promise.all(runs);
    expect(results.every((result) => result.status === 'cancelled')).toBe(true);
  });

  it('keeps a registry of runs by id', () => {
    const clock = new FakeClock();
    const registry = new RunRegistry();
    const first = new RunAbort('a', clock);
    registry.register(first);
    expect(() => registry.register(new RunAbort('a', clock))).toThrow(/already in progress/);
    expect(registry.runIds()).toEqual(['a']);
    expect(registry.cancel('missing')).toBe(false);
    expect(registry.cancel('a', 'why')).toBe(true);
    expect(first.cause).toBe('cancelled');
    expect((first.signal.reason as KeelError).code).toBe('run.cancelled');
    expect(registry.cancel('a')).toBe(false);
    registry.unregister(first);
    expect(registry.isRunning('a')).toBe(false);
  });

  it('an emptied registry and agent know no run, not even the entry that keeps their tables from shrinking', async () => {
    const registry = new RunRegistry();
    const run = new RunAbort('only', new FakeClock());
    registry.register(run);
    registry.unregister(run);
    expect(registry.runIds()).toEqual([]);
    expect(registry.isRunning('')).toBe(false);
    expect(registry.cancel('')).toBe(false);
    const assistant = agent({ model: scriptedModel([{ content: 'done' }]) });
    expect((await assistant.run('go')).status).toBe('completed');
    expect(assistant.cancel('')).toBe(false);
    expect(runRegistry.isRunning('')).toBe(false);
  });
});
