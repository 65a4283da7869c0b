import { describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../errors/codes.js';
import { KeelError, type KeelErrorOptions } from '../../errors/keel-error.js';
import { consecutive } from '../../policies/breaker/consecutive.js';
import { constant } from '../../policies/delays.js';
import type { Message, ModelProvider, ModelRequest } from '../../spec/model.js';
import type { RunEvent } from '../../spec/run-events.js';
import { FakeClock } from '../../testing/fake-clock.js';
import { type ScriptedStep, scriptedModel } from '../../testing/scripted-model.js';
import { type Agent, agent } from '../agent.js';
import type { AgentOptions } from '../agent-options.js';
import type { ConversationManager } from '../conversation/manager.js';
import { noReduction } from '../conversation/manager.js';
import type { RunResult } from './run.js';

const fault = (code: ErrorCode, options: KeelErrorOptions = {}) =>
  new KeelError(code, `simulated ${code}`, options);

function model(name: string, script: readonly ScriptedStep[], contextWindowTokens?: number) {
  return scriptedModel(script, { provider: 'test', model: name, contextWindowTokens });
}

/** Runs to the end on a fake clock moving 10 ms at a time, so that time passes only as far as the run needs. */
async function runOnClock(
  clock: FakeClock,
  assistant: Agent,
  input: string | Message[] = 'hi',
  events: RunEvent[] = [],
): Promise<RunResult> {
  let done = false;
  const pending = assistant.run(input, { onEvent: (event) => events.push(event) }).finally(() => {
    done = true;
  });
  while (!done) await clock.advance(10);
  return pending;
}

function build(clock: FakeClock, options: Partial<AgentOptions> & Pick<AgentOptions, 'model'>): Agent {
  return agent({ clock, retry: { delay: constant(250) }, ...options });
}

describe('model step: retries', () => {
  it('retries transient faults with the delay, on the clock, within one step', async () => {
    const clock = new FakeClock();
    const primary = model('primary', [
      fault('provider.overloaded'),
      fault('network.connection'),
      { content: 'done' },
    ]);
    const events: RunEvent[] = [];
    const result = await runOnClock(clock, build(clock, { model: primary }), 'hi', events);

    expect(result.status).toBe('completed');
    expect(result.report.durationMs).toBe(500);
    expect(result.report.requests).toEqual({ total: 3, byModel: { 'test/primary': 3 } });
    expect(result.report.retries).toEqual({ total: 2, model: 2, tool: 0, store: 0 });
    expect(result.report.waitingMs).toBe(500);
    expect(result.report.errors.byCode).toEqual({ 'provider.overloaded': 1, 'network.connection': 1 });
    expect(result.report.steps).toBe(1);
    const retries = events.filter((event) => event.type === 'retry-scheduled');
    expect(retries).toMatchObject([
      { target: 'model', name: 'test/primary', attempt: 1, delayMs: 250, errorCode: 'provider.overloaded' },
      { target: 'model', name: 'test/primary', attempt: 2, delayMs: 250, errorCode: 'network.connection' },
    ]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('waits what Retry-After asks instead of the computed delay', async () => {
    const clock = new FakeClock();
    const primary = model('primary', [
      fault('provider.rate_limited', { retryAfterMs: 3_000 }),
      { content: 'done' },
    ]);
    const result = await runOnClock(clock, build(clock, { model: primary }));
    expect(result.status).toBe('completed');
    expect(result.report.waitingMs).toBe(3_000);
  });

  it('times a hung model call out with network.timeout and retries it', async () => {
    const clock = new FakeClock();
    const seen: AbortSignal[] = [];
    const hung: ScriptedStep = (request: ModelRequest) => {
      seen.push(request.signal);
      return new Promise(() => {});
    };
    const primary = model('primary', [hung, { content: 'late but fine' }]);
    const result = await runOnClock(clock, build(clock, { model: primary, modelTimeoutMs: 1_000 }));
    expect(result.status).toBe('completed');
    expect(result.report.errors.byCode).toEqual({ 'network.timeout': 1 });
    expect(seen[0]!.aborted).toBe(true);
    expect((seen[0]!.reason as KeelError).code).toBe('network.timeout');
  });
});

describe('model step: fallback by error class', () => {
  it.each([
    'provider.rate_limited',
    'provider.overloaded',
    'provider.server_error',
    'network.timeout',
  ] as const)('falls back after %s outlasts the retries, and stays on the fallback', async (code) => {
    const clock = new FakeClock();
    const primary = model('primary', [fault(code), fault(code), fault(code)]);
    const backup = model('backup', [{ toolCalls: [{ name: 'missing_tool' }] }, { content: 'from backup' }]);
    const events: RunEvent[] = [];
    const result = await runOnClock(
      clock,
      build(clock, { model: primary, fallbacks: [backup] }),
      'hi',
      events,
    );

    expect(result.status).toBe('completed');
    expect(result.output).toBe('from backup');
    expect(result.report.requests.byModel).toEqual({ 'test/primary': 3, 'test/backup': 2 });
    expect(result.report.fallbacks).toEqual({
      total: 1,
      used: [{ step: 1, from: 'test/primary', to: 'test/backup', errorCode: code }],
    });
    expect(events.filter((event) => event.type === 'fallback-used')).toHaveLength(1);
    expect(result.state.modelIndex).toBe(1);
  });

  it.each(['provider.auth', 'provider.quota_exhausted', 'provider.bad_request'] as const)(
    'never falls back on %s: the run fails with it after one request',
    async (code) => {
      const clock = new FakeClock();
      const primary = model('primary', [fault(code)]);
      const backup = model('backup', [{ content: 'should not be asked' }]);
      const result = await runOnClock(clock, build(clock, { model: primary, fallbacks: [backup] }));

      expect(result.status).toBe('failed');
      expect(result.stopReason).toBe('model_error');
      expect(result.error?.code).toBe(code);
      expect(backup.calls).toHaveLength(0);
      expect(result.report.requests).toEqual({ total: 1, byModel: { 'test/primary': 1 } });
      expect(result.report.fallbacks.total).toBe(0);
      expect(result.report.retries.total).toBe(0);
    },
  );

  it('fails with the last error when every model is unavailable', async () => {
    const clock = new FakeClock();
    const primary = model('primary', [fault('provider.overloaded')]);
    const backup = model('backup', [fault('provider.server_error')]);
    const result = await runOnClock(
      clock,
      build(clock, { model: primary, fallbacks: [backup], retry: { maxAttempts: 1 } }),
    );
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('provider.server_error');
    expect(result.error?.message).toBe('simulated provider.server_error');
    expect(result.report.requests.total).toBe(2);
    expect(result.report.errors.byCode).toEqual({ 'provider.overloaded': 1, 'provider.server_error': 1 });
  });

  it('keeps a breaker per model across runs: once open, runs go straight to the fallback', async () => {
    const clock = new FakeClock();
    const primary = model('primary', [fault('provider.server_error'), fault('provider.server_error')]);
    const backup = model('backup', [{ content: 'one' }, { content: 'two' }, { content: 'three' }]);
    const assistant = build(clock, {
      model: primary,
      fallbacks: [backup],
      retry: { maxAttempts: 1 },
      breaker: { strategy: consecutive({ threshold: 2 }), halfOpenAfterMs: 60_000 },
    });
    const first = await runOnClock(clock, assistant);
    const secondEvents: RunEvent[] = [];
    const second = await runOnClock(clock, assistant, 'hi', secondEvents);
    const third = await runOnClock(clock, assistant);

    expect([first.output, second.output, third.output]).toEqual(['one', 'two', 'three']);
    expect(primary.calls).toHaveLength(2);
    expect(second.report.breakerTransitions).toMatchObject([
      { target: 'model', name: 'test/primary', to: 'open' },
    ]);
    expect(secondEvents.filter((event) => event.type === 'breaker-opened')).toMatchObject([
      { name: 'test/primary' },
    ]);
    expect(third.report.requests.byModel).toEqual({ 'test/backup': 1 });
    expect(third.report.fallbacks.used).toMatchObject([{ errorCode: 'policy.circuit_open' }]);
    expect(assistant.breakers.get('test/primary')?.state).toBe('open');
  });
});

describe('model step: breakers and auth', () => {
  it('does not let auth errors open the breaker, so later runs never fall back on them', async () => {
    const clock = new FakeClock();
    const primary = model(
      'primary',
      Array.from({ length: 6 }, () => fault('provider.auth')),
    );
    const backup = model('backup', [{ content: 'should not be asked' }]);
    const assistant = build(clock, {
      model: primary,
      fallbacks: [backup],
      breaker: { strategy: consecutive({ threshold: 2 }) },
    });
    for (let run = 0; run < 6; run++) {
      const result = await runOnClock(clock, assistant);
      expect(result.error?.code).toBe('provider.auth');
    }
    expect(assistant.breakers.get('test/primary')?.state).toBe('closed');
    expect(backup.calls).toHaveLength(0);
  });
});

describe('model step: context overflow', () => {
  const conversation: Message[] = [
    { role: 'user', content: 'task' },
    { role: 'assistant', content: 'old answer' },
    { role: 'user', content: 'old question' },
    { role: 'assistant', content: 'another answer' },
    { role: 'user', content: 'latest question' },
  ];

  function dropOldest(calls: number[]): ConversationManager {
    return {
      name: 'drop-oldest',
      async reduce(messages, context) {
        calls.push(context.attempt);
        if (messages.length <= 2) return { messages: [...messages], reduced: false };
        return { messages: [messages[0]!, ...messages.slice(3)], reduced: true };
      },
    };
  }

  it('has the conversation manager reduce, then retries the same model', async () => {
    const clock = new FakeClock();
    const reductions: number[] = [];
    const primary = model('primary', [fault('provider.context_overflow'), { content: 'fits now' }]);
    const events: RunEvent[] = [];
    const assistant = build(clock, { model: primary, conversationManager: dropOldest(reductions) });
    const result = await runOnClock(clock, assistant, conversation, events);

    expect(result.status).toBe('completed');
    expect(reductions).toEqual([1]);
    expect(primary.calls[0]!.messages).toHaveLength(5);
    expect(primary.calls[1]!.messages.map((message) => message.content)).toEqual([
      'task',
      'another answer',
      'latest question',
    ]);
    expect(result.report.contextReductions).toBe(1);
    expect(result.report.retries.total).toBe(0);
    expect(events.filter((event) => event.type === 'context-reduced')).toMatchObject([
      { messagesBefore: 5, messagesAfter: 3 },
    ]);
  });

  it('moves to a fallback with a larger context window when nothing can be removed', async () => {
    const clock = new FakeClock();
    const primary = model('small', [fault('provider.context_overflow')], 8_000);
    const smaller = model('smaller', [{ content: 'not asked' }], 4_000);
    const larger = model('larger', [{ content: 'plenty of room' }], 128_000);
    const assistant = build(clock, {
      model: primary,
      fallbacks: [smaller, larger],
      conversationManager: noReduction(),
    });
    const result = await runOnClock(clock, assistant, conversation);

    expect(result.output).toBe('plenty of room');
    expect(smaller.calls).toHaveLength(0);
    expect(result.report.fallbacks.used).toMatchObject([
      { from: 'test/small', to: 'test/larger', errorCode: 'provider.context_overflow' },
    ]);
  });

  it('fails with provider.context_overflow when no reduction and no larger model help', async () => {
    const clock = new FakeClock();
    const reductions: number[] = [];
    const primary = model('primary', [
      fault('provider.context_overflow'),
      fault('provider.context_overflow'),
      fault('provider.context_overflow'),
    ]);
    const assistant = build(clock, { model: primary, conversationManager: dropOldest(reductions) });
    const result = await runOnClock(clock, assistant, conversation);

    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('provider.context_overflow');
    // 5 messages, then 3, then 1; the third reduction removes nothing more, and the loop stops there.
    expect(reductions).toEqual([1, 2, 3]);
    expect(primary.calls).toHaveLength(3);
    expect(result.report.contextReductions).toBe(2);
  });

  it('stops when a reduction claims progress but removes nothing', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const stubborn: ConversationManager = {
      name: 'stubborn',
      async reduce(messages) {
        calls++;
        return { messages: [...messages], reduced: true };
      },
    };
    const primary = model('primary', [fault('provider.context_overflow')]);
    const result = await runOnClock(
      clock,
      build(clock, { model: primary, conversationManager: stubborn }),
      conversation,
    );
    expect(result.error?.code).toBe('provider.context_overflow');
    expect(calls).toBe(1);
    expect(primary.calls).toHaveLength(1);
  });
});

describe('model step: streaming', () => {
  it('delivers text deltas to the caller and as events', async () => {
    const primary = model('primary', [{ content: 'Hello there', textDeltas: ['Hello', ' there'] }]);
    const deltas: string[] = [];
    const events: RunEvent[] = [];
    const result = await agent({ model: primary }).run('hi', {
      onTextDelta: (delta) => deltas.push(delta),
      onEvent: (event) => events.push(event),
    });
    expect(result.output).toBe('Hello there');
    expect(deltas).toEqual(['Hello', ' there']);
    expect(
      events
        .filter((event) => event.type === 'text-delta')
        .map((event) => (event as { delta: string }).delta),
    ).toEqual(['Hello', ' there']);
  });

  it('recovers a call that broke after its text reached the caller: the fallback continues it, nothing is sent twice', async () => {
    const backup = model('backup', [{ content: 'Once upon a time' }]);
    const streaming: ModelProvider = {
      provider: 'test',
      model: 'streaming',
      async generate(request) {
        request.onTextDelta?.('Once upon');
        throw fault('provider.overloaded');
      },
    };
    const deltas: string[] = [];
    const events: RunEvent[] = [];
    const result = await agent({ model: streaming, fallbacks: [backup], retry: { maxAttempts: 1 } }).run(
      'tell a story',
      { onTextDelta: (delta) => deltas.push(delta), onEvent: (event) => events.push(event) },
    );
    expect(result.status).toBe('completed');
    expect(result.output).toBe('Once upon a time');
    expect(deltas).toEqual(['Once upon', ' a time']);
    expect(events.filter((event) => event.type === 'stream-recovered')).toMatchObject([
      {
        mode: 'continued',
        keptCharacters: 9,
        errorCode: 'provider.overloaded',
        model: 'test/backup',
        step: 1,
      },
    ]);
    expect(result.report.streamRecoveries).toEqual({ total: 1, continued: 1, restarted: 0 });
  });

  it('with streamRecovery: false, never replays a call whose text reached the caller: the run fails with the partial output', async () => {
    const backup = model('backup', [{ content: 'not asked' }]);
    let requests = 0;
    const streaming: ModelProvider = {
      provider: 'test',
      model: 'streaming',
      async generate(request) {
        requests++;
        request.onTextDelta?.('Once upon');
        throw fault('provider.overloaded');
      },
    };
    const deltas: string[] = [];
    const result = await agent({ model: streaming, fallbacks: [backup], streamRecovery: false }).run(
      'tell a story',
      { onTextDelta: (delta) => deltas.push(delta) },
    );
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('provider.overloaded');
    expect(result.error?.data.partialOutput).toBe('Once upon');
    expect(deltas).toEqual(['Once upon']);
    expect(requests).toBe(1);
    expect(backup.calls).toHaveLength(0);
  });
});

describe('model step: a Retry-After the run cannot wait for', () => {
  const rateLimited = (retryAfterMs: number) =>
    fault('provider.rate_limited', { retryAfterMs, status: 429, provider: 'test' });

  it('falls back at once when the Retry-After ends after the run’s deadline', async () => {
    const clock = new FakeClock();
    const primary = model('primary', [rateLimited(8_000), { content: 'from primary' }]);
    const backup = model('backup', [{ content: 'from backup' }]);
    const events: RunEvent[] = [];
    const result = await runOnClock(
      clock,
      build(clock, { model: primary, fallbacks: [backup], limits: { timeoutMs: 5_000 } }),
      'hi',
      events,
    );
    expect(result.status).toBe('completed');
    expect(result.output).toBe('from backup');
    expect(result.report.durationMs).toBeLessThan(100);
    expect(result.report.waitingMs).toBe(0);
    expect(result.report.retries.model).toBe(0);
    expect(result.report.fallbacks.used).toEqual([
      { step: 1, from: 'test/primary', to: 'test/backup', errorCode: 'provider.rate_limited' },
    ]);
    expect(events.some((event) => event.type === 'retry-scheduled')).toBe(false);
  });

  it('with no fallback, fails at once with provider.rate_limited carrying the wait it was asked for', async () => {
    const clock = new FakeClock();
    const primary = model('primary', [rateLimited(8_000), { content: 'too late' }]);
    const result = await runOnClock(clock, build(clock, { model: primary, limits: { timeoutMs: 5_000 } }));
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('provider.rate_limited');
    expect(result.error?.retryAfterMs).toBe(8_000);
    expect(result.error?.data).toMatchObject({
      retryAfterMs: 8_000,
      remainingMs: 5_000,
      reason: 'retry_after_past_deadline',
    });
    expect(result.report.durationMs).toBeLessThan(100);
    expect(result.report.waitingMs).toBe(0);
  });

  it('with no fallback, fails at once on a Retry-After beyond retry.maxRetryAfterMs', async () => {
    const clock = new FakeClock();
    const primary = model('primary', [rateLimited(90_000), { content: 'too late' }]);
    const result = await runOnClock(
      clock,
      build(clock, { model: primary, retry: { delay: constant(250), maxRetryAfterMs: 60_000 } }),
    );
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('provider.rate_limited');
    expect(result.error?.data).toMatchObject({
      retryAfterMs: 90_000,
      maxRetryAfterMs: 60_000,
      reason: 'retry_after_too_long',
    });
    expect(result.report.durationMs).toBeLessThan(100);
  });

  it('waits a Retry-After that ends before the deadline, as before', async () => {
    const clock = new FakeClock();
    const primary = model('primary', [rateLimited(3_000), { content: 'done' }]);
    const backup = model('backup', [{ content: 'from backup' }]);
    const result = await runOnClock(
      clock,
      build(clock, { model: primary, fallbacks: [backup], limits: { timeoutMs: 5_000 } }),
    );
    expect(result.output).toBe('done');
    expect(result.report.waitingMs).toBe(3_000);
  });

  it('counts a wait the deadline cuts short only up to the deadline', async () => {
    const clock = new FakeClock();
    const primary = model('primary', [fault('provider.overloaded'), { content: 'too late' }]);
    const result = await runOnClock(
      clock,
      agent({ clock, model: primary, retry: { delay: constant(8_000) }, limits: { timeoutMs: 5_000 } }),
    );
    expect(result.error?.code).toBe('run.timeout');
    expect(result.report.waitingMs).toBeLessThanOrEqual(5_000);
  });
});
