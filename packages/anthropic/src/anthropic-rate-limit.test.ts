import { type ModelRequest, retry } from '@keel/core';
import { FakeClock, type HttpTestServer, sendJson, startHttpTestServer } from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { anthropic } from './index.js';

let server: HttpTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function request(signal: AbortSignal): ModelRequest {
  return { messages: [{ role: 'user', content: 'Hi' }], signal };
}

const message = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'c',
  content: [{ type: 'text', text: 'Hello' }],
  stop_reason: 'end_turn',
  usage: { input_tokens: 1, output_tokens: 1 },
};

/** An RFC 3339 timestamp `seconds` from now, as Anthropic's reset headers carry. */
const inSeconds = (seconds: number): string => new Date(Date.now() + seconds * 1000).toISOString();

/**
 * A retry policy on a fake clock calls the model once, is refused with a 429 carrying `headers`, and must wait
 * `expectedWaitMs` (within `toleranceMs`, for timestamps read against the real time) before the second call.
 */
async function waitsThenSucceeds(
  headers: Record<string, string>,
  expectedWaitMs: number,
  toleranceMs = 0,
): Promise<void> {
  server = await startHttpTestServer((received, response) => {
    if (received.index === 1) {
      sendJson(
        response,
        429,
        {
          type: 'error',
          error: { type: 'rate_limit_error', message: 'This request would exceed your rate limit' },
        },
        headers,
      );
    } else sendJson(response, 200, message);
  });
  const model = anthropic('c', { apiKey: 'k', baseUrl: server.url });
  const clock = new FakeClock();
  const policy = retry({ clock, maxAttempts: 2 });
  const waits: number[] = [];
  const retried = new Promise<void>((resolve) =>
    policy.onRetry(({ delayMs }) => {
      waits.push(delayMs);
      resolve();
    }),
  );
  const pending = policy.execute(({ signal }) => model.generate(request(signal)));
  // A policy that gives up instead of waiting settles without retrying: the assertions below then say so.
  await Promise.race([retried, pending.then(ignore, ignore)]);
  expect(waits).toHaveLength(1);
  expect(waits[0]).toBeGreaterThanOrEqual(expectedWaitMs - toleranceMs);
  expect(waits[0]).toBeLessThanOrEqual(expectedWaitMs);
  await clock.advance(waits[0]! - 1);
  expect(server.requests).toHaveLength(1);
  await clock.advance(1);
  await expect(pending).resolves.toMatchObject({ content: 'Hello' });
  expect(server.requests).toHaveLength(2);
}

function ignore(): void {}

describe('anthropic rate-limit headers', () => {
  it('429 with retry-after: 1 and a token limit resetting in 54 s waits 1 s (as the SDK does) and succeeds', async () => {
    await waitsThenSucceeds(
      {
        'retry-after': '1',
        'anthropic-ratelimit-input-tokens-limit': '40000',
        'anthropic-ratelimit-input-tokens-remaining': '0',
        'anthropic-ratelimit-input-tokens-reset': inSeconds(54),
        'anthropic-ratelimit-requests-limit': '50',
        'anthropic-ratelimit-requests-remaining': '49',
        'anthropic-ratelimit-requests-reset': inSeconds(2),
      },
      1_000,
    );
  });

  it('retry-after-ms decides before retry-after', async () => {
    await waitsThenSucceeds({ 'retry-after-ms': '1200', 'retry-after': '2' }, 1_200);
  });

  it('without retry-after, waits for the reset of the limit that ran out, not one with room left', async () => {
    await waitsThenSucceeds(
      {
        'anthropic-ratelimit-output-tokens-remaining': '0',
        'anthropic-ratelimit-output-tokens-reset': inSeconds(5),
        'anthropic-ratelimit-requests-remaining': '12',
        'anthropic-ratelimit-requests-reset': inSeconds(50),
      },
      5_000,
      2_000,
    );
  });
});

describe('rate-limit headers of an answer', () => {
  it('reach keel as response.rateLimit, for the pace governor', async () => {
    const resetAt = new Date(Date.now() + 30_000).toISOString();
    server = await startHttpTestServer((_received, response) =>
      sendJson(response, 200, message, {
        'anthropic-ratelimit-requests-limit': '50',
        'anthropic-ratelimit-requests-remaining': '49',
        'anthropic-ratelimit-requests-reset': resetAt,
        'anthropic-ratelimit-tokens-remaining': '40000',
      }),
    );
    const model = anthropic('c', { apiKey: 'k', baseUrl: server.url });
    const answer = await model.generate(request(new AbortController().signal));
    expect(answer.rateLimit).toMatchObject({
      requestsLimit: 50,
      requestsRemaining: 49,
      tokensRemaining: 40_000,
    });
    expect(answer.rateLimit?.requestsResetInMs).toBeGreaterThan(28_000);
    expect(answer.rateLimit?.requestsResetInMs).toBeLessThanOrEqual(30_000);
  });
});
