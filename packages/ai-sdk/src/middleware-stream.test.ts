// keelMiddleware under streamText: a stream is retried, or falls back, only while nothing has reached the caller.
import { constant, KeelError } from '@keel/core';
import { FakeClock } from '@keel/core/testing';
import { streamText, wrapLanguageModel } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { type KeelMiddlewareEvent, keelMiddleware } from './index.js';
import { advanceThroughWaits, chatModel, requestsByModel, serverPool } from './test-support/simulated.js';

const servers = serverPool();
afterEach(servers.closeAll);

/** Every part of a streamText call, and its text. */
async function drain(result: ReturnType<typeof streamText>) {
  const parts: { type: string; error?: unknown }[] = [];
  let text = '';
  for await (const part of result.fullStream) {
    parts.push(part);
    if (part.type === 'text-delta') text += part.text;
  }
  return { parts, text, types: parts.map((part) => part.type) };
}

describe('keelMiddleware with streamText', () => {
  it('retries a stream refused before its first output (429 with Retry-After), unseen by the caller', async () => {
    const server = await servers.start({
      models: { 'sim-primary': { faults: { retryAfterMs: 1_000, sequence: ['rate_limit'] } } },
    });
    const clock = new FakeClock();
    const events: KeelMiddlewareEvent[] = [];
    const advance = advanceThroughWaits(clock);
    const model = wrapLanguageModel({
      model: chatModel(server),
      middleware: keelMiddleware({
        clock,
        onEvent: (event) => {
          events.push(event);
          advance(event);
        },
      }),
    });
    const { text, types } = await drain(streamText({ model, prompt: 'Say hello', maxRetries: 0 }));
    expect(text).toContain('Say hello');
    expect(types).not.toContain('error');
    expect(types.filter((type) => type === 'start-step')).toHaveLength(1);
    expect(requestsByModel(server)).toEqual({ 'sim-primary': 2 });
    expect(events).toMatchObject([
      { type: 'retry-scheduled', errorCode: 'provider.rate_limited', delayMs: 1_000 },
    ]);
  });

  it('falls back to another model when a stream cannot start', async () => {
    const server = await servers.start({
      models: { 'sim-primary': { faults: { rates: { overloaded: 1 } } }, 'sim-fallback': {} },
    });
    const model = wrapLanguageModel({
      model: chatModel(server, 'sim-primary'),
      middleware: keelMiddleware({
        retry: { maxAttempts: 2, delay: constant(0) },
        fallbacks: [chatModel(server, 'sim-fallback')],
      }),
    });
    const { text, types } = await drain(streamText({ model, prompt: 'Say hello', maxRetries: 0 }));
    expect(text).toContain('Say hello');
    expect(types).not.toContain('error');
    expect(requestsByModel(server)).toEqual({ 'sim-primary': 2, 'sim-fallback': 1 });
  });

  it('does not replay a stream cut after its first output: the failure is its error part', async () => {
    const server = await servers.start({
      models: { 'sim-primary': { faults: { sequence: ['reset'] } }, 'sim-fallback': {} },
    });
    const model = wrapLanguageModel({
      model: chatModel(server, 'sim-primary'),
      middleware: keelMiddleware({
        retry: { delay: constant(0) },
        fallbacks: [chatModel(server, 'sim-fallback')],
      }),
    });
    const { parts, text } = await drain(
      streamText({ model, prompt: 'Tell me about the weather', maxRetries: 0, onError: () => undefined }),
    );
    expect(text.length).toBeGreaterThan(0);
    const error = parts.find((part) => part.type === 'error')?.error;
    expect(KeelError.isInstance(error)).toBe(true);
    // A stream cut off before its end, as keel's own providers classify one.
    expect((error as KeelError).code).toBe('provider.invalid_response');
    // Neither retried nor sent to the fallback: the caller already has part of the answer.
    expect(requestsByModel(server)).toEqual({ 'sim-primary': 1 });
  });

  it('times out a stream that never starts and retries it', async () => {
    const clock = new FakeClock();
    const server = await servers.start({
      models: { 'sim-primary': { faults: { sequence: ['hang'] } } },
      onRequest: (record) => {
        if (record.fault === 'hang') setImmediate(() => void clock.advance(3_000));
      },
    });
    const advance = advanceThroughWaits(clock);
    const model = wrapLanguageModel({
      model: chatModel(server),
      middleware: keelMiddleware({
        clock,
        timeoutMs: 3_000,
        retry: { delay: constant(0) },
        onEvent: advance,
      }),
    });
    const { text } = await drain(streamText({ model, prompt: 'Say hello', maxRetries: 0 }));
    expect(text).toContain('Say hello');
    expect(requestsByModel(server)).toEqual({ 'sim-primary': 2 });
  });

  it('a stream that fails on every attempt before any output rejects the call with the KeelError', async () => {
    const server = await servers.start({ faults: { rates: { server_error: 1 } } });
    const model = wrapLanguageModel({
      model: chatModel(server),
      middleware: keelMiddleware({ retry: { maxAttempts: 2, delay: constant(0) } }),
    });
    const error = await model
      .doStream({ prompt: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }] })
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
    expect(KeelError.isInstance(error) && error.code).toBe('provider.server_error');
    expect(requestsByModel(server)).toEqual({ 'sim-primary': 2 });
  });
});
