// keel's policies inside the AI SDK: generateText on a model wrapped with keelMiddleware, @ai-sdk/openai speaking to
// the simulated server on 127.0.0.1 with its fault schedule. Time comes from a fake clock.
import { APICallError } from '@ai-sdk/provider';
import { consecutive, constant, KeelError, retryBudget } from '@keel/core';
import { FakeClock } from '@keel/core/testing';
import { generateText, wrapLanguageModel } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { type KeelMiddlewareEvent, keelMiddleware } from './index.js';
import { advanceThroughWaits, chatModel, requestsByModel, serverPool } from './test-support/simulated.js';

const servers = serverPool();
afterEach(servers.closeAll);

async function failure(promise: Promise<unknown>): Promise<KeelError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!KeelError.isInstance(error)) throw new Error(`expected a KeelError, got ${String(error)}`);
  return error;
}

describe('keelMiddleware with generateText', () => {
  it('absorbs a 429 (honouring its Retry-After), a 500 and a reset: one request per attempt', async () => {
    const server = await servers.start({
      models: {
        'sim-primary': { faults: { retryAfterMs: 2_000, sequence: ['rate_limit', 'server_error', 'reset'] } },
      },
    });
    const clock = new FakeClock();
    const events: KeelMiddlewareEvent[] = [];
    const advance = advanceThroughWaits(clock);
    const model = wrapLanguageModel({
      model: chatModel(server),
      middleware: keelMiddleware({
        clock,
        retry: { maxAttempts: 4, delay: constant(0) },
        onEvent: (event) => {
          events.push(event);
          advance(event);
        },
      }),
    });
    const { text } = await generateText({ model, prompt: 'Say hello', maxRetries: 0 });
    expect(text).toContain('Say hello');
    expect(requestsByModel(server)).toEqual({ 'sim-primary': 4 });
    expect(
      events.map((event) => event.type === 'retry-scheduled' && [event.errorCode, event.delayMs]),
    ).toEqual([
      ['provider.rate_limited', 2_000],
      ['provider.server_error', 0],
      ['provider.invalid_response', 0],
    ]);
  });

  it("the AI SDK's own retries never multiply keel's: with generateText's default maxRetries, 3 attempts are 3 requests", async () => {
    const server = await servers.start({ faults: { rates: { unavailable: 1 } } });
    const model = wrapLanguageModel({
      model: chatModel(server),
      middleware: keelMiddleware({ retry: { maxAttempts: 3, delay: constant(0) } }),
    });
    const error = await failure(generateText({ model, prompt: 'Say hello' }));
    expect(error).toMatchObject({ code: 'provider.overloaded', status: 503 });
    expect(APICallError.isInstance(error.cause)).toBe(true);
    expect(requestsByModel(server)).toEqual({ 'sim-primary': 3 });
  });

  it('opens the breaker of a failing model, stops calling it, falls back, and closes once a probe succeeds', async () => {
    const server = await servers.start({
      models: { 'sim-primary': { faults: { rates: { server_error: 1 } } }, 'sim-fallback': {} },
    });
    const clock = new FakeClock();
    const events: KeelMiddlewareEvent[] = [];
    const model = wrapLanguageModel({
      model: chatModel(server, 'sim-primary'),
      middleware: keelMiddleware({
        clock,
        breaker: { strategy: consecutive({ threshold: 3 }), halfOpenAfterMs: 10_000 },
        retry: { maxAttempts: 1 },
        fallbacks: [chatModel(server, 'sim-fallback')],
        onEvent: (event) => events.push(event),
      }),
    });
    for (let call = 0; call < 5; call++) {
      const { text } = await generateText({ model, prompt: `Call ${call}`, maxRetries: 0 });
      expect(text).toContain(`Call ${call}`);
    }
    // Three failures opened the breaker: the last two calls went to the fallback without a request to the primary.
    expect(requestsByModel(server)).toEqual({ 'sim-primary': 3, 'sim-fallback': 5 });
    expect(
      events.map((event) =>
        event.type === 'fallback'
          ? `fallback ${event.errorCode}`
          : `${event.type} ${'model' in event ? event.model : ''}`,
      ),
    ).toEqual([
      'fallback provider.server_error',
      'fallback provider.server_error',
      'breaker-opened openai.chat/sim-primary',
      'fallback provider.server_error',
      'fallback policy.circuit_open',
      'fallback policy.circuit_open',
    ]);

    // The primary recovers; after halfOpenAfterMs one probe reaches it, succeeds, and the breaker closes.
    server.configureModel('sim-primary', { faults: {} });
    await clock.advance(10_000);
    const { text } = await generateText({ model, prompt: 'Call 5', maxRetries: 0 });
    expect(text).toContain('Call 5');
    expect(requestsByModel(server)).toEqual({ 'sim-primary': 4, 'sim-fallback': 5 });
    expect(events.slice(-2).map((event) => event.type)).toEqual(['breaker-half-opened', 'breaker-closed']);
  });

  it('times out a request that hangs and retries it', async () => {
    const clock = new FakeClock();
    const server = await servers.start({
      models: { 'sim-primary': { faults: { sequence: ['hang'] } } },
      // The hung request has arrived: let the fake clock pass the timeout.
      onRequest: (record) => {
        if (record.fault === 'hang') setImmediate(() => void clock.advance(5_000));
      },
    });
    const events: KeelMiddlewareEvent[] = [];
    const advance = advanceThroughWaits(clock);
    const model = wrapLanguageModel({
      model: chatModel(server),
      middleware: keelMiddleware({
        clock,
        timeoutMs: 5_000,
        retry: { delay: constant(0) },
        onEvent: (event) => {
          events.push(event);
          advance(event);
        },
      }),
    });
    const { text } = await generateText({ model, prompt: 'Say hello', maxRetries: 0 });
    expect(text).toContain('Say hello');
    expect(requestsByModel(server)).toEqual({ 'sim-primary': 2 });
    expect(events).toMatchObject([{ type: 'retry-scheduled', errorCode: 'network.timeout' }]);
  });

  it('stops retrying once the shared budget is spent', async () => {
    const server = await servers.start({ faults: { rates: { server_error: 1 } } });
    const model = wrapLanguageModel({
      model: chatModel(server),
      middleware: keelMiddleware({
        budget: retryBudget({ maxRetries: 1, ratio: false }),
        retry: { maxAttempts: 5, delay: constant(0) },
      }),
    });
    expect((await failure(generateText({ model, prompt: 'one', maxRetries: 0 }))).code).toBe(
      'policy.budget_exhausted',
    );
    expect(requestsByModel(server)).toEqual({ 'sim-primary': 2 });
    // The next call gets no retry at all.
    await failure(generateText({ model, prompt: 'two', maxRetries: 0 }));
    expect(requestsByModel(server)).toEqual({ 'sim-primary': 3 });
  });

  it('neither retries nor falls back on a wrong API key, and the breaker does not count it', async () => {
    const server = await servers.start({ apiKey: 'sk-the-right-key' });
    const events: KeelMiddlewareEvent[] = [];
    const model = wrapLanguageModel({
      model: chatModel(server, 'sim-primary'),
      middleware: keelMiddleware({
        breaker: { strategy: consecutive({ threshold: 1 }) },
        fallbacks: [chatModel(server, 'sim-fallback')],
        onEvent: (event) => events.push(event),
      }),
    });
    for (let call = 0; call < 2; call++) {
      expect((await failure(generateText({ model, prompt: 'Hi', maxRetries: 0 }))).code).toBe(
        'provider.auth',
      );
    }
    expect(server.requests).toHaveLength(2);
    expect(events).toEqual([]);
  });

  it("the caller's abort ends the call at once: no retry, no fallback, the AbortError as it is", async () => {
    const controller = new AbortController();
    const server = await servers.start({
      models: { 'sim-primary': { faults: { sequence: ['hang'] } }, 'sim-fallback': {} },
      onRequest: () => controller.abort(),
    });
    const events: KeelMiddlewareEvent[] = [];
    const model = wrapLanguageModel({
      model: chatModel(server, 'sim-primary'),
      middleware: keelMiddleware({
        fallbacks: [chatModel(server, 'sim-fallback')],
        onEvent: (event) => events.push(event),
      }),
    });
    const error = await generateText({ model, prompt: 'Hi', abortSignal: controller.signal }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect((error as Error).name).toBe('AbortError');
    expect(requestsByModel(server)).toEqual({ 'sim-primary': 1 });
    expect(events).toEqual([]);
  });

  it('checks its options when made', () => {
    expect(() => keelMiddleware({ retries: 3 } as never)).toThrow(
      /Unknown keelMiddleware\(\) option retries/,
    );
    expect(() => keelMiddleware({ retry: { attempts: 3 } as never })).toThrow(
      /Unknown keelMiddleware\(\) retry option attempts.*did you mean maxAttempts\?/,
    );
    expect(() => keelMiddleware({ retry: { maxAttempts: 0 } })).toThrow(/maxAttempts/);
    expect(() => keelMiddleware({ timeoutMs: 0 })).toThrow(/timeoutMs must be a positive number/);
    expect(() => keelMiddleware({ breaker: { halfOpenAfterMs: -1 } })).toThrow(/halfOpenAfterMs/);
    expect(() => keelMiddleware({ fallbacks: ['gpt-4.1' as never] })).toThrow(
      /fallbacks\[0\]: got the model id/,
    );
  });
});
