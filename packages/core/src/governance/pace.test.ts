import { describe, expect, it } from 'vitest';
import { agent } from '../agent/agent.js';
import { KeelError } from '../errors/keel-error.js';
import { rateLimitFromHeaders } from '../errors/rate-limit-headers.js';
import { constant } from '../policies/delays.js';
import { FakeClock, flushMicrotasks } from '../testing/fake-clock.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { memoryPaceStore } from './pace-governor.js';
import type { PaceStore } from './pace-store.js';

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

describe('pace options', () => {
  it('refuses a bad pace option or run priority with config.invalid saying what to write', async () => {
    const model = scriptedModel(() => ({ content: 'ok' }));
    const refusal = (pace: unknown) => {
      try {
        agent({ model, pace: pace as boolean });
        return undefined;
      } catch (error) {
        return error as KeelError;
      }
    };
    expect(refusal('yes')).toMatchObject({ code: 'config.invalid', data: { option: 'pace' } });
    expect(refusal({ store: {} })?.message).toMatch(
      /pace\.store must be a PaceStore \(admit, observe, refused\)/,
    );
    expect(refusal({ keyName: 'has space' })?.message).toMatch(/pace\.keyName must be 1 to 64 letters/);
    expect(refusal({ every: 5 })?.message).toMatch(/unknown option "every"; known options: store, keyName/);
    expect(refusal({ store: memoryPaceStore(), keyName: 'team-key' })).toBeUndefined();
    expect(refusal(false)).toBeUndefined();
    const assistant = agent({ model, pace: true });
    for (const priority of [11, -11, 1.5, '5']) {
      await expect(assistant.run('hi', { priority: priority as number })).rejects.toMatchObject({
        code: 'config.invalid',
        message: expect.stringMatching(/priority must be an integer from -10 to 10/),
      });
    }
  });
});

describe('pace priorities and tenants', () => {
  /** An agent whose provider said 2 requests are left of a 1,000 ms window, and the moments each prompt was sent. */
  async function constrained(pace: true | { store: PaceStore }) {
    const clock = new FakeClock(0);
    const sent: string[] = [];
    const model = scriptedModel((request) => {
      sent.push(String(request.messages.at(-1)?.content));
      return {
        content: 'ok',
        rateLimit: { requestsLimit: 2, requestsRemaining: 2 - sent.length, requestsResetInMs: 1_000 },
      };
    });
    const assistant = agent({ model, clock, pace });
    expect((await assistant.run('first')).status).toBe('completed');
    sent.length = 0;
    return { clock, sent, assistant };
  }

  it('sends a waiting run of higher priority first, and a paced wait is no retry', async () => {
    const { clock, sent, assistant } = await constrained(true);
    const runs = [
      assistant.run('low 1'),
      assistant.run('low 2'),
      assistant.run('low 3'),
      assistant.run('urgent', { priority: 5 }),
    ];
    for (let step = 0; step < 40; step++) await clock.advance(100);
    const results = await Promise.all(runs);
    // One request was left in the window: low 1 took it; the urgent run, last to ask, went next.
    expect(sent).toEqual(['low 1', 'urgent', 'low 2', 'low 3']);
    expect(results.map((result) => result.report.retries.total)).toEqual([0, 0, 0, 0]);
  });

  it('gives tenants with waiting runs the slots in turns, across agents sharing a store', async () => {
    const store = memoryPaceStore();
    const { clock, sent, assistant } = await constrained({ store });
    const runs = [
      ...['a1', 'a2', 'a3', 'a4'].map((prompt) => assistant.run(prompt, { tenant: 'acme' })),
      ...['b1', 'b2'].map((prompt) => assistant.run(prompt, { tenant: 'beta' })),
    ];
    for (let step = 0; step < 60; step++) await clock.advance(100);
    await Promise.all(runs);
    expect(sent).toEqual(['a1', 'b1', 'a2', 'b2', 'a3', 'a4']);
  });
});
