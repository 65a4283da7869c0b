import { getEventListeners } from 'node:events';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushMicrotasks } from '../testing/fake-clock.js';
import { classifyResponse } from './classify-response.js';
import type { KeelError } from './keel-error.js';

/** A 500 whose body sends half a JSON document and then nothing, ever; records whether it was cancelled. */
function stalledResponse() {
  const cancelled: unknown[] = [];
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"error": {"code": "insufficient_quota"'));
    },
    cancel(reason) {
      cancelled.push(reason);
    },
  });
  const response = new Response(body, { status: 500, headers: { 'content-type': 'application/json' } });
  return { response, cancelled };
}

function track<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error) => Object.assign(state, { settled: true, error }),
  );
  return state;
}

describe('classifyResponse: a body that never ends', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('does not read at all when the signal has already aborted, and cancels the body', async () => {
    const { response, cancelled } = stalledResponse();
    const controller = new AbortController();
    controller.abort();
    const outcome = track(classifyResponse(response, { signal: controller.signal }));
    await flushMicrotasks();
    expect(outcome.settled).toBe(true);
    const error = outcome.value as KeelError;
    // The status decides: the partial body is not trusted.
    expect(error.code).toBe('provider.server_error');
    expect((error.cause as { body?: unknown }).body).toBeUndefined();
    expect(cancelled).toHaveLength(1);
  });

  it('stops waiting when the signal aborts during the read, cancelling the reader', async () => {
    const { response, cancelled } = stalledResponse();
    const controller = new AbortController();
    const outcome = track(classifyResponse(response, { signal: controller.signal }));
    await flushMicrotasks();
    expect(outcome.settled).toBe(false);
    controller.abort(new Error('caller left'));
    await flushMicrotasks();
    expect(outcome.settled).toBe(true);
    expect((outcome.value as KeelError).code).toBe('provider.server_error');
    expect(cancelled).toHaveLength(1);
  });

  it('gives up on the body after maxBodyWaitMs (5 s by default) and classifies on the status', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { response, cancelled } = stalledResponse();
    const outcome = track(classifyResponse(response));
    await vi.advanceTimersByTimeAsync(4_999);
    expect(outcome.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await flushMicrotasks();
    expect(outcome.settled).toBe(true);
    expect((outcome.value as KeelError).code).toBe('provider.server_error');
    expect(cancelled).toHaveLength(1);
  });

  it('honours a shorter maxBodyWaitMs', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { response } = stalledResponse();
    const outcome = track(classifyResponse(response, { maxBodyWaitMs: 100 }));
    await vi.advanceTimersByTimeAsync(100);
    await flushMicrotasks();
    expect(outcome.settled).toBe(true);
  });

  it('clears its timer and listener once a complete body is read', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const controller = new AbortController();
    const body = { error: { code: 'insufficient_quota', message: 'You exceeded your current quota' } };
    const response = new Response(JSON.stringify(body), { status: 429 });
    const error = await classifyResponse(response, { signal: controller.signal });
    expect(error.code).toBe('provider.quota_exhausted');
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY, '5000'])(
    'rejects maxBodyWaitMs %s with config.invalid',
    async (maxBodyWaitMs) => {
      const response = new Response('{}', { status: 500 });
      await expect(
        classifyResponse(response, { maxBodyWaitMs: maxBodyWaitMs as never }),
      ).rejects.toMatchObject({
        code: 'config.invalid',
        data: { option: 'maxBodyWaitMs' },
      });
    },
  );
});

describe('classifyResponse: what is kept on the error', () => {
  it('keeps the body and headers on its cause with credentials redacted, after classifying the raw body', async () => {
    const key = 'sk-proj-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0UvWx';
    const response = new Response(
      JSON.stringify({
        error: { message: `Incorrect API key provided: ${key}`, code: 'insufficient_quota' },
      }),
      { status: 429, headers: { 'content-type': 'application/json', 'set-cookie': 'session=s3cr3t-cookie' } },
    );
    const error = await classifyResponse(response);
    expect(error.code).toBe('provider.quota_exhausted');
    const shown = inspect(error, { depth: 10 });
    expect(shown).not.toContain(key);
    expect(shown).not.toContain('s3cr3t-cookie');
    expect(shown).toContain('Incorrect API key provided: [redacted]');
    const cause = error.cause as { body: string; headers: Record<string, string> };
    expect(cause.body).toContain('"code":"insufficient_quota"');
    expect(cause.headers['content-type']).toBe('application/json');
  });
});
