import { type ModelRequest, retry } from '@keel/core';
import { FakeClock, type HttpTestServer, sendJson, startHttpTestServer } from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { openaiCompatible } from './index.js';

let server: HttpTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function request(signal: AbortSignal): ModelRequest {
  return { messages: [{ role: 'user', content: 'Hi' }], signal };
}

const completion = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
};

/**
 * A retry policy on a fake clock calls the model once, is refused with a 429 carrying `headers`, and must wait
 * exactly `expectedWaitMs` before the second call, which succeeds.
 */
async function waitsThenSucceeds(headers: Record<string, string>, expectedWaitMs: number): Promise<void> {
  server = await startHttpTestServer((received, response) => {
    if (received.index === 1) {
      sendJson(
        response,
        429,
        { error: { message: 'Rate limit reached for tokens', type: 'tokens', code: 'rate_limit_exceeded' } },
        headers,
      );
    } else sendJson(response, 200, completion);
  });
  const model = openaiCompatible({ baseUrl: server.url, model: 'm' });
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
  expect(waits).toEqual([expectedWaitMs]);
  await clock.advance(expectedWaitMs - 1);
  expect(server.requests).toHaveLength(1);
  await clock.advance(1);
  await expect(pending).resolves.toMatchObject({ content: 'Hello' });
  expect(server.requests).toHaveLength(2);
}

function ignore(): void {}

describe('openai rate-limit headers', () => {
  it('429 with retry-after: 1 and x-ratelimit-reset-tokens: 6m0s waits 1 s (as the SDK does) and succeeds', async () => {
    await waitsThenSucceeds(
      {
        'retry-after': '1',
        'x-ratelimit-limit-tokens': '30000',
        'x-ratelimit-remaining-tokens': '0',
        'x-ratelimit-reset-tokens': '6m0s',
        'x-ratelimit-limit-requests': '500',
        'x-ratelimit-remaining-requests': '499',
        'x-ratelimit-reset-requests': '120ms',
      },
      1_000,
    );
  });

  it('retry-after-ms decides before retry-after', async () => {
    await waitsThenSucceeds({ 'retry-after-ms': '250', 'retry-after': '30' }, 250);
  });

  it('without retry-after, waits for the reset of the limit that ran out', async () => {
    await waitsThenSucceeds(
      {
        'x-ratelimit-remaining-tokens': '0',
        'x-ratelimit-reset-tokens': '1.5s',
        'x-ratelimit-remaining-requests': '499',
        'x-ratelimit-reset-requests': '6m0s',
      },
      1_500,
    );
  });
});

describe('rate-limit headers of an answer', () => {
  it('reach keel as response.rateLimit, for the pace governor', async () => {
    server = await startHttpTestServer((_received, response) =>
      sendJson(response, 200, completion, {
        'x-ratelimit-limit-requests': '60',
        'x-ratelimit-remaining-requests': '59',
        'x-ratelimit-reset-requests': '1s',
        'x-ratelimit-remaining-tokens': '9000',
        'x-ratelimit-reset-tokens': '6m0s',
      }),
    );
    const model = openaiCompatible({ baseUrl: server.url, model: 'm' });
    const answer = await model.generate(request(new AbortController().signal));
    expect(answer.rateLimit).toMatchObject({
      requestsLimit: 60,
      requestsRemaining: 59,
      tokensRemaining: 9_000,
    });
    expect(answer.rateLimit).toMatchObject({ requestsResetInMs: 1_000, tokensResetInMs: 360_000 });
  });
});
