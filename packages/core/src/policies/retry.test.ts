import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { KeelError } from '../errors/keel-error.js';
import { FakeClock, flushMicrotasks } from '../testing/fake-clock.js';
import { constant, type Delay, exponential } from './delays.js';
import type { PolicyContext } from './policy.js';
import { type RetryEvent, type RetryGiveUpEvent, type RetryOptions, retry } from './retry.js';
import { retryBudget } from './retry-budget.js';

const overloaded = (retryAfterMs?: number) =>
  new KeelError('provider.overloaded', 'busy', retryAfterMs === undefined ? {} : { retryAfterMs });

/** A promise's outcome, readable synchronously once settled. */
function track<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error) => Object.assign(state, { settled: true, error }),
  );
  return state;
}

/** A function that fails with `errors[n]` on call n (then succeeds), recording the clock time of every call. */
function script(clock: FakeClock, errors: unknown[]) {
  const calls: Array<{ atMs: number; attempt: number }> = [];
  const startMs = clock.now();
  const fn = (context: PolicyContext) => {
    calls.push({ atMs: clock.now() - startMs, attempt: context.attempt });
    const error = errors[calls.length - 1];
    if (error !== undefined) return Promise.reject(error);
    return Promise.resolve('ok');
  };
  return { fn, calls };
}

/** Lets pending promise callbacks run, then fires every timer they (and their successors) set. */
async function drain(clock: FakeClock): Promise<void> {
  await flushMicrotasks();
  await clock.runAll();
}

const failing = (error: unknown) => Array.from({ length: 100 }, () => error);

function setup(options: RetryOptions = {}) {
  const clock = new FakeClock();
  const policy = retry({ delay: constant(1_000), clock, ...options });
  return { clock, policy };
}

describe('retry', () => {
  it('returns the first success without waiting', async () => {
    const { clock, policy } = setup();
    const { fn, calls } = script(clock, []);
    await expect(policy.execute(fn)).resolves.toBe('ok');
    expect(calls).toEqual([{ atMs: 0, attempt: 1 }]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('retries retryable failures, numbering attempts, until one succeeds', async () => {
    const { clock, policy } = setup();
    const { fn, calls } = script(clock, [overloaded(), overloaded()]);
    const outcome = track(policy.execute(fn));
    await clock.advance(999);
    expect(calls).toHaveLength(1);
    await clock.advance(1);
    expect(calls).toHaveLength(2);
    await clock.advance(1_000);
    expect(outcome).toEqual({ settled: true, value: 'ok' });
    expect(calls).toEqual([
      { atMs: 0, attempt: 1 },
      { atMs: 1_000, attempt: 2 },
      { atMs: 2_000, attempt: 3 },
    ]);
  });

  it('counts the first call in maxAttempts and gives up with retries_exhausted, last error as cause', async () => {
    for (const maxAttempts of [1, 2, 3, 5]) {
      const { clock, policy } = setup({ maxAttempts });
      const errors = Array.from({ length: 10 }, () => overloaded());
      const { fn, calls } = script(clock, errors);
      const outcome = track(policy.execute(fn));
      await drain(clock);
      expect(calls).toHaveLength(maxAttempts);
      const error = outcome.error as KeelError;
      expect(error.code).toBe('policy.retries_exhausted');
      expect(error.data).toMatchObject({ attempts: maxAttempts, reason: 'max_attempts' });
      expect(error.cause).toBe(errors[maxAttempts - 1]);
    }
  });

  it('defaults to 3 attempts with full-jitter exponential delays from 500 ms', async () => {
    const clock = new FakeClock();
    const policy = retry({ clock, random: () => 0.5 });
    const delays: number[] = [];
    policy.onRetry(({ delayMs }) => delays.push(delayMs));
    const { fn, calls } = script(clock, failing(overloaded()));
    const outcome = track(policy.execute(fn));
    await drain(clock);
    expect(calls.map((call) => call.atMs)).toEqual([0, 250, 750]);
    expect(delays).toEqual([250, 500]);
    expect((outcome.error as KeelError).code).toBe('policy.retries_exhausted');
  });

  it('rethrows a failure that is not retryable unchanged, without retrying', async () => {
    for (const error of [
      new KeelError('provider.auth', 'bad key'),
      new TypeError('x is undefined'),
      'a string',
    ]) {
      const { clock, policy } = setup();
      const { fn, calls } = script(clock, failing(error));
      await expect(policy.execute(fn)).rejects.toBe(error);
      expect(calls).toHaveLength(1);
    }
  });

  it('classifies raw errors, retrying a connection reset', async () => {
    const { clock, policy } = setup();
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    const retries: string[] = [];
    policy.onRetry(({ error }) => retries.push(error.code));
    const { fn, calls } = script(clock, [reset]);
    const outcome = track(policy.execute(fn));
    await drain(clock);
    expect(outcome.value).toBe('ok');
    expect(calls).toHaveLength(2);
    expect(retries).toEqual(['network.connection']);
  });

  it('lets retryIf decide, with the classified error and the failed attempt', async () => {
    const seen: Array<[string, number]> = [];
    const { clock, policy } = setup({
      maxAttempts: 5,
      retryIf: (error, attempt) => {
        seen.push([error.code, attempt]);
        return attempt < 3;
      },
    });
    const plain = new Error('flaky disk');
    const { fn, calls } = script(clock, [
      new KeelError('provider.auth', 'no'),
      plain,
      overloaded(),
      undefined,
    ]);
    const outcome = track(policy.execute(fn));
    await drain(clock);
    expect(calls).toHaveLength(3);
    expect(seen).toEqual([
      ['provider.auth', 1],
      ['internal.unexpected', 2],
      ['provider.overloaded', 3],
    ]);
    // retryIf said no to a retryable error: it is rethrown as it is.
    expect((outcome.error as KeelError).code).toBe('provider.overloaded');
  });

  it('waits a Retry-After instead of the computed delay', async () => {
    const { clock, policy } = setup();
    const { fn, calls } = script(clock, [overloaded(5_000), overloaded(0)]);
    const outcome = track(policy.execute(fn));
    await drain(clock);
    expect(calls.map((call) => call.atMs)).toEqual([0, 5_000, 5_000]);
    expect(outcome.value).toBe('ok');
  });

  it('reads an HTTP-date Retry-After against its own clock', async () => {
    // The fake clock is years behind the wall clock: a date read against Date.now() would be long past (no wait).
    const { clock, policy } = setup({ maxAttempts: 2 });
    const busy = Object.assign(new Error('Service Unavailable'), {
      status: 503,
      headers: { 'retry-after': new Date(clock.now() + 5_000).toUTCString() },
    });
    const delays: number[] = [];
    policy.onRetry((event) => delays.push(event.delayMs));
    const { fn, calls } = script(clock, [busy]);
    const outcome = track(policy.execute(fn));
    await clock.advance(4_999);
    expect(calls).toHaveLength(1);
    await clock.advance(1);
    expect(outcome.value).toBe('ok');
    expect(delays).toEqual([5_000]);
    expect(calls.map((call) => call.atMs)).toEqual([0, 5_000]);
  });

  it('gives up at once when a Retry-After exceeds maxRetryAfterMs', async () => {
    const { clock, policy } = setup({ maxRetryAfterMs: 10_000 });
    const cause = overloaded(10_001);
    const { fn, calls } = script(clock, [cause]);
    const error = (await policy.execute(fn).catch((thrown) => thrown)) as KeelError;
    expect(error.code).toBe('policy.retries_exhausted');
    expect(error.data).toEqual({
      attempts: 1,
      reason: 'retry_after_too_long',
      retryAfterMs: 10_001,
      maxRetryAfterMs: 10_000,
    });
    expect(error.cause).toBe(cause);
    expect(calls).toHaveLength(1);
    expect(clock.pendingTimers).toBe(0);
  });

  it('honours a Retry-After at exactly the default cap of 60 s', async () => {
    const { clock, policy } = setup();
    const { fn, calls } = script(clock, [overloaded(60_000)]);
    const outcome = track(policy.execute(fn));
    await drain(clock);
    expect(calls.map((call) => call.atMs)).toEqual([0, 60_000]);
    expect(outcome.value).toBe('ok');
  });

  it('cuts the last wait to end at maxElapsedMs, and starts no attempt after it', async () => {
    const { clock, policy } = setup({ maxAttempts: 100, maxElapsedMs: 2_500 });
    const { fn, calls } = script(clock, failing(overloaded()));
    const outcome = track(policy.execute(fn));
    await drain(clock);
    expect(calls.map((call) => call.atMs)).toEqual([0, 1_000, 2_000, 2_500]);
    expect((outcome.error as KeelError).data).toMatchObject({ attempts: 4, reason: 'max_elapsed' });
  });

  it('does not retry when an attempt itself ran past maxElapsedMs', async () => {
    const { clock, policy } = setup({ maxElapsedMs: 2_000 });
    let calls = 0;
    const slow = async () => {
      calls++;
      await new Promise((resolve) => clock.setTimeout(() => resolve(undefined), 3_000));
      throw overloaded();
    };
    const outcome = track(policy.execute(slow));
    await drain(clock);
    expect(calls).toBe(1);
    expect((outcome.error as KeelError).data.reason).toBe('max_elapsed');
  });

  it('gives up at once when a Retry-After would end past maxElapsedMs', async () => {
    const { clock, policy } = setup({ maxElapsedMs: 4_000 });
    const { fn, calls } = script(clock, [overloaded(5_000)]);
    const error = (await policy.execute(fn).catch((thrown) => thrown)) as KeelError;
    expect(error.data.reason).toBe('max_elapsed');
    expect(calls).toHaveLength(1);
    expect(clock.pendingTimers).toBe(0);
  });

  it('sanitises a custom delay that returns NaN or a negative number', async () => {
    const broken: Delay = { next: ({ attempt }) => (attempt === 1 ? Number.NaN : -50) };
    const { clock, policy } = setup({ delay: broken });
    const delays: number[] = [];
    policy.onRetry(({ delayMs }) => delays.push(delayMs));
    const { fn } = script(clock, [overloaded(), overloaded()]);
    const outcome = track(policy.execute(fn));
    await clock.advance(0);
    expect(outcome.value).toBe('ok');
    expect(delays).toEqual([0, 0]);
  });

  it('ends a wait at once when the caller aborts, with the abort reason, leaving no timer or listener', async () => {
    const { clock, policy } = setup({ delay: exponential({ initialMs: 60_000 }) });
    const controller = new AbortController();
    const { fn, calls } = script(clock, failing(overloaded()));
    const outcome = track(policy.execute(fn, controller.signal));
    await flushMicrotasks();
    expect(clock.pendingTimers).toBe(1);
    const reason = new Error('user pressed stop');
    controller.abort(reason);
    await flushMicrotasks();
    // Settled without the clock moving: the sleep did not wait out its 60 s.
    expect(outcome).toEqual({ settled: true, error: reason });
    expect(calls).toHaveLength(1);
    expect(clock.pendingTimers).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('starts no attempt when the signal is already aborted', async () => {
    const { clock, policy } = setup();
    const { fn, calls } = script(clock, []);
    const reason = new Error('gone');
    await expect(policy.execute(fn, AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(calls).toHaveLength(0);
  });

  it('reports the abort reason, not the attempt failure, when the caller aborts during an attempt', async () => {
    const { clock, policy } = setup();
    const controller = new AbortController();
    let calls = 0;
    const fn = ({ signal }: PolicyContext) =>
      new Promise((_, reject) => {
        calls++;
        signal.addEventListener('abort', () => reject(overloaded()), { once: true });
      });
    const outcome = track(policy.execute(fn, controller.signal));
    await flushMicrotasks();
    controller.abort('stop');
    await drain(clock);
    expect(outcome).toEqual({ settled: true, error: 'stop' });
    expect(calls).toBe(1);
    expect(clock.pendingTimers).toBe(0);
  });

  it('never creates a signal on the success path, even after retries', async () => {
    const { clock, policy } = setup();
    let signalReads = 0;
    const context: PolicyContext = {
      get signal() {
        signalReads++;
        return new AbortController().signal;
      },
      aborted: false,
      attempt: 1,
    };
    await policy.execute(() => 'ok', context);
    expect(signalReads).toBe(0);
    const { fn } = script(clock, [overloaded()]);
    const outcome = track(policy.execute(fn, context));
    await drain(clock);
    expect(outcome.value).toBe('ok');
    // Only the wait needed a signal to listen to.
    expect(signalReads).toBe(1);
  });

  it('draws one budget token per retry and stops with budget_exhausted when it is spent', async () => {
    const budget = retryBudget({ maxRetries: 3, ratio: false });
    const first = setup({ maxAttempts: 10, budget });
    const second = setup({ maxAttempts: 10, budget });
    const firstRun = script(first.clock, [overloaded(), overloaded(), undefined]);
    const firstOutcome = track(first.policy.execute(firstRun.fn));
    await drain(first.clock);
    expect(firstOutcome.value).toBe('ok');
    expect(budget.snapshot()).toMatchObject({ spent: 2, remaining: 1 });

    const errors = failing(overloaded());
    const secondRun = script(second.clock, errors);
    const secondOutcome = track(second.policy.execute(secondRun.fn));
    await drain(second.clock);
    // One retry left in the shared budget: two calls, then the budget says no.
    expect(secondRun.calls).toHaveLength(2);
    const error = secondOutcome.error as KeelError;
    expect(error.code).toBe('policy.budget_exhausted');
    expect(error.data).toEqual({ attempts: 2 });
    expect(error.cause).toBe(errors[1]);
  });

  it('gives the budget token back when the caller cancels during the wait, so a cancelled retry spends nothing', async () => {
    const budget = retryBudget({ maxRetries: 5, ratio: false });
    const { clock, policy } = setup({ maxAttempts: 10, budget });
    const controller = new AbortController();
    const { fn, calls } = script(clock, failing(overloaded()));
    const outcome = track(policy.execute(fn, controller.signal));
    await clock.advance(500);
    expect(calls).toHaveLength(1);
    controller.abort('caller left');
    await flushMicrotasks();
    expect(outcome.error).toBe('caller left');
    expect(budget.snapshot()).toMatchObject({ spent: 0, remaining: 5 });
    expect(clock.pendingTimers).toBe(0);
  });

  it('gives up at once, without waiting, when the budget is already spent', async () => {
    const budget = retryBudget({ maxRetries: 1, ratio: false });
    expect(budget.tryAcquireRetry()).toBe(true);
    const { clock, policy } = setup({ maxAttempts: 10, budget });
    const { fn, calls } = script(clock, failing(overloaded()));
    const outcome = track(policy.execute(fn));
    await flushMicrotasks();
    expect((outcome.error as KeelError).code).toBe('policy.budget_exhausted');
    expect(calls).toHaveLength(1);
    expect(clock.pendingTimers).toBe(0);
  });

  it('records one request per execution in the budget, none per retry', async () => {
    const budget = retryBudget({ clock: new FakeClock() });
    const { clock, policy } = setup({ budget });
    const { fn } = script(clock, [overloaded(), overloaded()]);
    const outcome = track(policy.execute(fn));
    await drain(clock);
    await policy.execute(() => 'ok');
    expect(outcome.value).toBe('ok');
    expect(budget.snapshot()).toMatchObject({ requestsInWindow: 2, retriesInWindow: 2 });
  });

  it('emits retry, give-up and success events', async () => {
    const { clock, policy } = setup({ maxAttempts: 2 });
    const retries: RetryEvent[] = [];
    const giveUps: RetryGiveUpEvent[] = [];
    const successes: number[] = [];
    policy.onRetry((event) => retries.push(event));
    policy.onGiveUp((event) => giveUps.push(event));
    policy.onSuccess(({ attempts }) => successes.push(attempts));
    const first = overloaded();
    const { fn } = script(clock, [first, undefined]);
    const success = track(policy.execute(fn));
    await drain(clock);
    expect(success.value).toBe('ok');
    expect(retries).toEqual([{ attempt: 1, delayMs: 1_000, error: first }]);
    expect(successes).toEqual([2]);

    const auth = new KeelError('provider.auth', 'no');
    await expect(policy.execute(() => Promise.reject(auth))).rejects.toBe(auth);
    const failed = track(policy.execute(script(clock, failing(overloaded())).fn));
    await drain(clock);
    expect(failed.error).toBeInstanceOf(KeelError);
    expect(giveUps.map((event) => [event.reason, event.attempts])).toEqual([
      ['not_retryable', 1],
      ['max_attempts', 2],
    ]);
  });

  it('rejects invalid options with config.invalid at creation', () => {
    const cases: unknown[] = [
      { maxAttempts: 0 },
      { maxAttempts: 2.5 },
      { maxAttempts: Number.NaN },
      { retryIf: true },
      { delay: 1_000 },
      { random: 0.5 },
      { maxRetryAfterMs: -1 },
      { maxElapsedMs: 0 },
      { budget: {} },
      { clock: {} },
      { maxAttempt: 3 },
      null,
    ];
    for (const options of cases) {
      let caught: unknown;
      try {
        retry(options as never);
      } catch (error) {
        caught = error;
      }
      expect(KeelError.isInstance(caught) && caught.code === 'config.invalid', JSON.stringify(options)).toBe(
        true,
      );
    }
    expect(() => retry({ maxAttempts: Number.POSITIVE_INFINITY, maxElapsedMs: 1_000 })).not.toThrow();
  });
});
