import { describe, expect, it } from 'vitest';
import { agent } from '../agent/agent.js';
import { KeelError } from '../errors/keel-error.js';
import { rateLimitFromHeaders } from '../errors/rate-limit-headers.js';
import { constant } from '../policies/delays.js';
import { FakeClock, flushMicrotasks } from '../testing/fake-clock.js';
import { scriptedModel } from '../testing/scripted-model.js';

describe('rateLimitFromHeaders', () => {
  it("reads OpenAI's and Anthropic's rate-limit headers as moments on the caller's clock", () => {
    expect(
      rateLimitFromHeaders(
        {
          'x-ratelimit-limit-requests': '500',
          'x-ratelimit-remaining-requests': '499',
          'x-ratelimit-reset-requests': '120ms',
          'x-ratelimit-remaining-tokens': '29000',
          'x-ratelimit-reset-tokens': '6m0s',
        },
        1_000,
      ),
    ).toEqual({
      requestsLimit: 500,
      requestsRemaining: 499,
      requestsResetInMs: 120,
      tokensRemaining: 29_000,
      tokensResetInMs: 360_000,
    });
    const now = Date.parse('2026-11-27T12:00:00Z');
    expect(
      rateLimitFromHeaders(
        new Headers({
          'anthropic-ratelimit-requests-remaining': '3',
          'anthropic-ratelimit-requests-reset': '2026-11-27T12:00:02Z',
          'anthropic-ratelimit-tokens-remaining': 'lots',
        }),
        now,
      ),
    ).toEqual({ requestsRemaining: 3, requestsResetInMs: 2_000 });
    expect(rateLimitFromHeaders({ 'content-type': 'application/json' })).toBeUndefined();
  });
});

describe('pace', () => {
  it('waits for the window when the provider said no request is left, rather than draw a 429', async () => {
    const clock = new FakeClock(0);
    const model = scriptedModel(() => ({
      content: 'ok',
      rateLimit: { requestsRemaining: 0, requestsResetInMs: 1_000 },
    }));
    const assistant = agent({ model, clock, pace: true });
    expect((await assistant.run('one')).status).toBe('completed');
    const second = assistant.run('two');
    await flushMicrotasks();
    expect(model.calls).toHaveLength(1);
    await clock.advance(999);
    expect(model.calls).toHaveLength(1);
    await clock.advance(1);
    expect((await second).status).toBe('completed');
    expect(model.calls).toHaveLength(2);
    // Without pace the call goes at once.
    const unpaced = agent({ model, clock });
    expect((await unpaced.run('three')).status).toBe('completed');
    expect(model.calls).toHaveLength(3);
  });

  it('spaces the requests left evenly over what is left of the window', async () => {
    const clock = new FakeClock(0);
    const sentAtMs: number[] = [];
    const model = scriptedModel(() => {
      sentAtMs.push(clock.now());
      // A window of 5 requests ending at 1,000 ms.
      return {
        content: 'ok',
        rateLimit: { requestsRemaining: 5 - sentAtMs.length, requestsResetInMs: 1_000 - clock.now() },
      };
    });
    const assistant = agent({ model, clock, pace: true });
    await assistant.run('first');
    const runs = [assistant.run('a'), assistant.run('b'), assistant.run('c')];
    for (let step = 0; step < 20; step++) await clock.advance(100);
    await Promise.all(runs);
    // After the first answer: 4 requests left over 1,000 ms, one every 250 ms.
    expect(sentAtMs).toEqual([0, 0, 250, 500]);
  });

  it("makes every run wait out a 429's Retry-After, not only the one that drew it", async () => {
    const clock = new FakeClock(0);
    let calls = 0;
    const model = scriptedModel(() => {
      calls++;
      return calls === 1
        ? new KeelError('provider.rate_limited', 'slow down', { retryAfterMs: 2_000 })
        : { content: 'ok' };
    });
    const assistant = agent({
      model,
      clock,
      pace: true,
      retry: { delay: constant(0), maxRetryAfterMs: 0 },
    });
    const first = await assistant.run('one');
    expect(first.status).toBe('failed');
    const second = assistant.run('two');
    await clock.advance(1_999);
    expect(calls).toBe(1);
    await clock.advance(1);
    expect((await second).status).toBe('completed');
  });
});
