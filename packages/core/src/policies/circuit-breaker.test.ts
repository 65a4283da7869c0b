import { describe, expect, it, vi } from 'vitest';
import { KeelError } from '../errors/keel-error.js';
import { FakeClock } from '../testing/fake-clock.js';
import type { BreakerStore, BreakerStoreFactory, BreakerTransition } from './breaker/breaker-store.js';
import { consecutive } from './breaker/consecutive.js';
import { MemoryBreakerStore } from './breaker/in-memory-breaker-store.js';
import { parseBreakerSnapshot } from './breaker/snapshot.js';
import { timeWindow } from './breaker/time-window.js';
import { type CircuitBreakerOptions, circuitBreaker } from './circuit-breaker.js';
import { toContext } from './context.js';
import type { PolicyContext } from './policy.js';

const fail = (error: unknown) => () => Promise.reject(error);
const succeed = () => Promise.resolve('ok');
const serverError = () => new KeelError('provider.server_error', 'upstream 503', { status: 503 });

function setup(options: CircuitBreakerOptions = {}) {
  const clock = new FakeClock(0);
  const breaker = circuitBreaker({
    strategy: consecutive({ threshold: 2 }),
    halfOpenAfterMs: 1_000,
    clock,
    ...options,
  });
  const transitions: BreakerTransition[] = [];
  breaker.onStateChange((transition) => transitions.push(transition));
  const trip = async () => {
    for (let index = 0; index < 2; index++) await breaker.execute(fail(serverError())).catch(() => undefined);
  };
  return { clock, breaker, transitions, trip };
}

/** A function that stays pending until the test settles it. */
function deferred<T = string>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((innerResolve, innerReject) => {
    resolve = innerResolve;
    reject = innerReject;
  });
  return { promise, resolve, reject, fn: () => promise };
}

async function rejection(promise: Promise<unknown>): Promise<KeelError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!KeelError.isInstance(error)) throw new Error(`expected a KeelError, got ${String(error)}`);
  return error;
}

describe('circuitBreaker: closed', () => {
  it('returns the value and hands the caller context through untouched', async () => {
    const { breaker } = setup();
    const context = toContext(new AbortController().signal);
    let seen: PolicyContext | undefined;
    await expect(
      breaker.execute((received) => {
        seen = received;
        return 42;
      }, context),
    ).resolves.toBe(42);
    expect(seen).toBe(context);
  });

  it('passes a bare signal through as the context signal', async () => {
    const { breaker } = setup();
    const controller = new AbortController();
    await breaker.execute((context) => expect(context.signal).toBe(controller.signal), controller.signal);
  });

  it('rethrows the function error as it is while counting it', async () => {
    const { breaker } = setup();
    const error = serverError();
    await expect(breaker.execute(fail(error))).rejects.toBe(error);
    expect(breaker.toJSON().window).toEqual({ failures: 1, calls: 1 });
  });

  it('also catches a function that throws synchronously', async () => {
    const { breaker } = setup();
    const error = new Error('sync');
    await expect(
      breaker.execute(() => {
        throw error;
      }),
    ).rejects.toBe(error);
    expect(breaker.toJSON().window).toEqual({ failures: 1, calls: 1 });
  });
});

describe('circuitBreaker: open', () => {
  it('opens at the threshold and rejects fast with policy.circuit_open, retryAfterMs and data', async () => {
    const { breaker, trip, clock } = setup({ name: 'openai' });
    await trip();
    expect(breaker.state).toBe('open');
    await clock.advance(300);
    const fn = vi.fn(succeed);
    const error = await rejection(breaker.execute(fn));
    expect(fn).not.toHaveBeenCalled();
    expect(error.code).toBe('policy.circuit_open');
    expect(error.retryAfterMs).toBe(700);
    expect(error.data).toEqual({ breaker: 'openai', state: 'open', remainingMs: 700 });
    expect(error.message).toBe('circuit breaker "openai" is open: calls are rejected for another 700 ms');
  });

  it('emits onBreak with the error that opened it and onRejected for each refusal', async () => {
    const { breaker } = setup({ name: 'tool:search' });
    const breaks: BreakerTransition[] = [];
    const rejected: unknown[] = [];
    breaker.onBreak((event) => breaks.push(event));
    breaker.onRejected((event) => rejected.push(event));
    const last = serverError();
    await breaker.execute(fail(serverError())).catch(() => undefined);
    await breaker.execute(fail(last)).catch(() => undefined);
    await breaker.execute(succeed).catch(() => undefined);
    expect(breaks).toEqual([
      { from: 'closed', to: 'open', reason: 'failure-threshold', atMs: 0, openForMs: 1_000, error: last },
    ]);
    expect(rejected).toEqual([{ breaker: 'tool:search', state: 'open', remainingMs: 1_000 }]);
  });

  it('grows the open period with each open in a row, up to maxMs, and resets it on close', async () => {
    const { breaker, trip, clock, transitions } = setup({
      halfOpenAfterMs: { initialMs: 1_000, factor: 2, maxMs: 3_000 },
    });
    await trip();
    for (const _ of [1, 2, 3]) {
      await clock.advance(transitions.at(-1)!.openForMs!);
      await breaker.execute(fail(serverError())).catch(() => undefined);
    }
    const opens = transitions.filter((transition) => transition.to === 'open').map((item) => item.openForMs);
    expect(opens).toEqual([1_000, 2_000, 3_000, 3_000]);
    await clock.advance(3_000);
    await breaker.execute(succeed);
    await trip();
    expect(transitions.at(-1)!.openForMs).toBe(1_000);
  });
});

describe('circuitBreaker: a refusal carries the failure that opened the breaker', () => {
  it('as cause, from the failure that crossed the threshold', async () => {
    const { breaker } = setup();
    const first = serverError();
    const last = serverError();
    await breaker.execute(fail(first)).catch(() => undefined);
    await breaker.execute(fail(last)).catch(() => undefined);
    const refused = await rejection(breaker.execute(succeed));
    expect(refused.code).toBe('policy.circuit_open');
    expect(refused.cause).toBe(last);
  });

  it('from the probe failure that reopened it, also while half-open with every slot taken', async () => {
    const { breaker, trip, clock } = setup();
    await trip();
    await clock.advance(1_000);
    const probeFailure = new KeelError('provider.overloaded', 'still overloaded');
    await breaker.execute(fail(probeFailure)).catch(() => undefined);
    expect((await rejection(breaker.execute(succeed))).cause).toBe(probeFailure);
    await clock.advance(2_000);
    const probe = deferred();
    const running = breaker.execute(probe.fn);
    const refused = await rejection(breaker.execute(succeed));
    expect(refused.data.state).toBe('half-open');
    expect(refused.cause).toBe(probeFailure);
    probe.resolve('ok');
    await running;
    await expect(breaker.execute(succeed)).resolves.toBe('ok');
  });

  it('keeps the last known failure when a probe times out, and none when isolated', async () => {
    const { breaker, trip, clock } = setup({ probeTimeoutMs: 5_000 });
    const opening = serverError();
    await breaker.execute(fail(serverError())).catch(() => undefined);
    await breaker.execute(fail(opening)).catch(() => undefined);
    await clock.advance(1_000);
    void breaker.execute(deferred().fn);
    await clock.advance(5_000);
    expect(breaker.state).toBe('open');
    expect((await rejection(breaker.execute(succeed))).cause).toBe(opening);
    await breaker.reset();
    await trip();
    await breaker.isolate();
    expect((await rejection(breaker.execute(succeed))).cause).toBeUndefined();
  });
});

describe('circuitBreaker: synchronous outcomes', () => {
  it('records a synchronous success and a synchronous throw in the order they happened', async () => {
    const breaker = circuitBreaker({ clock: new FakeClock(0) });
    // 50 calls started at once, every 10th throwing at once: never 5 failures in a row.
    const calls = Array.from({ length: 50 }, (_, index) =>
      breaker.execute(() => {
        if ((index + 1) % 10 === 0) throw serverError();
        return index;
      }),
    );
    const outcomes = await Promise.allSettled(calls);
    expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toHaveLength(5);
    expect(breaker.state).toBe('closed');
    expect(breaker.toJSON().window).toEqual({ failures: 1, calls: 5 });
    await expect(breaker.execute(() => 'healthy')).resolves.toBe('healthy');
  });
});

describe('circuitBreaker: half-open', () => {
  it('is half-open after halfOpenAfterMs and emits onHalfOpen', async () => {
    const { breaker, trip, clock } = setup();
    const halfOpens: BreakerTransition[] = [];
    breaker.onHalfOpen((event) => halfOpens.push(event));
    await trip();
    await clock.advance(999);
    expect(breaker.state).toBe('open');
    await clock.advance(1);
    expect(breaker.state).toBe('half-open');
    expect(halfOpens).toEqual([{ from: 'open', to: 'half-open', reason: 'open-elapsed', atMs: 1_000 }]);
  });

  // A peer shipped a half-open breaker that admitted every caller.
  it('admits exactly one probe by default and rejects every other caller fast', async () => {
    const { breaker, trip, clock } = setup();
    await trip();
    await clock.advance(1_000);
    const probe = deferred();
    const calls = vi.fn(probe.fn);
    const running = breaker.execute(calls);
    const others = await Promise.all([1, 2, 3].map(() => rejection(breaker.execute(calls))));
    expect(calls).toHaveBeenCalledTimes(1);
    expect(others.map((error) => [error.code, error.data.state])).toEqual([
      ['policy.circuit_open', 'half-open'],
      ['policy.circuit_open', 'half-open'],
      ['policy.circuit_open', 'half-open'],
    ]);
    expect(others[0]!.retryAfterMs).toBe(1_000);
    probe.resolve('recovered');
    await expect(running).resolves.toBe('recovered');
    expect(breaker.state).toBe('closed');
  });

  it('admits exactly halfOpenMaxProbes concurrent probes', async () => {
    const { breaker, trip, clock } = setup({ halfOpenMaxProbes: 3, probeSuccessesToClose: 3 });
    await trip();
    await clock.advance(1_000);
    const probe = deferred();
    const calls = vi.fn(probe.fn);
    const attempts = [1, 2, 3, 4, 5].map(() => breaker.execute(calls).catch((error: unknown) => error));
    await clock.advance(0);
    expect(calls).toHaveBeenCalledTimes(3);
    probe.resolve('fine');
    const results = await Promise.all(attempts);
    expect(results.slice(0, 3)).toEqual(['fine', 'fine', 'fine']);
    expect(results.slice(3).map((error) => (error as KeelError).code)).toEqual([
      'policy.circuit_open',
      'policy.circuit_open',
    ]);
    expect(breaker.state).toBe('closed');
  });

  it('closes on a probe success and emits onReset', async () => {
    const { breaker, trip, clock, transitions } = setup();
    const resets: BreakerTransition[] = [];
    breaker.onReset((event) => resets.push(event));
    await trip();
    await clock.advance(1_000);
    await breaker.execute(succeed);
    expect(resets).toEqual([{ from: 'half-open', to: 'closed', reason: 'probe-succeeded', atMs: 1_000 }]);
    expect(transitions.map((item) => item.to)).toEqual(['open', 'half-open', 'closed']);
  });

  it('needs probeSuccessesToClose successes to close', async () => {
    const { breaker, trip, clock } = setup({ probeSuccessesToClose: 2 });
    await trip();
    await clock.advance(1_000);
    await breaker.execute(succeed);
    expect(breaker.state).toBe('half-open');
    await breaker.execute(succeed);
    expect(breaker.state).toBe('closed');
  });

  it('reopens on a probe failure', async () => {
    const { breaker, trip, clock, transitions } = setup();
    await trip();
    await clock.advance(1_000);
    const error = serverError();
    await expect(breaker.execute(fail(error))).rejects.toBe(error);
    expect(transitions.at(-1)).toMatchObject({
      from: 'half-open',
      to: 'open',
      reason: 'probe-failed',
      error,
    });
  });

  // A peer shipped a breaker stuck half-open when its probe never reported back.
  it('frees the slot of a probe that never reports back after probeTimeoutMs, counting it as a failure', async () => {
    const { breaker, trip, clock, transitions } = setup({ probeTimeoutMs: 5_000 });
    await trip();
    await clock.advance(1_000);
    const hung = deferred();
    const late = breaker.execute(hung.fn);
    await clock.advance(4_999);
    expect((await rejection(breaker.execute(succeed))).data.state).toBe('half-open');
    await clock.advance(1);
    expect(breaker.state).toBe('open');
    expect(transitions.at(-1)).toMatchObject({ to: 'open', reason: 'probe-timed-out', atMs: 6_000 });
    await clock.advance(1_000);
    await expect(breaker.execute(succeed)).resolves.toBe('ok');
    expect(breaker.state).toBe('closed');
    // The hung probe's late success changes nothing and still reaches its caller.
    hung.resolve('late');
    await expect(late).resolves.toBe('late');
    expect(transitions.map((item) => item.reason)).toEqual([
      'failure-threshold',
      'open-elapsed',
      'probe-timed-out',
      'open-elapsed',
      'probe-succeeded',
    ]);
  });

  it('defaults probeTimeoutMs to the first open period (at least 1 s)', async () => {
    const { breaker, trip, clock } = setup({ halfOpenAfterMs: 2_000 });
    await trip();
    await clock.advance(2_000);
    void breaker.execute(deferred().fn);
    await clock.advance(1_999);
    expect(breaker.state).toBe('half-open');
    await clock.advance(1);
    expect(breaker.state).toBe('open');
  });

  // A peer shipped a breaker stuck half-open when the probe's error was one it did not count.
  it('frees the probe slot when the probe fails with an ignored error, without reopening', async () => {
    const { breaker, trip, clock } = setup({ isFailure: (error) => error !== 'not ours' });
    await trip();
    await clock.advance(1_000);
    await expect(breaker.execute(fail('not ours'))).rejects.toBe('not ours');
    expect(breaker.state).toBe('half-open');
    await expect(breaker.execute(succeed)).resolves.toBe('ok');
    expect(breaker.state).toBe('closed');
  });

  it('frees the probe slot and surfaces the bug when isFailure throws', async () => {
    const bug = new Error('predicate bug');
    const { breaker, trip, clock } = setup({
      isFailure: (error) => {
        if (error === 'boom') throw bug;
        return true;
      },
    });
    await trip();
    await clock.advance(1_000);
    await expect(breaker.execute(fail('boom'))).rejects.toBe(bug);
    expect(breaker.state).toBe('open');
  });
});

describe('circuitBreaker: which errors count', () => {
  it.each([
    ['provider.bad_request', false],
    ['provider.context_overflow', false],
    ['tool.invalid_input', false],
    ['guardrail.input', false],
    ['policy.bulkhead_full', false],
    ['provider.server_error', true],
    ['provider.rate_limited', true],
    ['network.timeout', true],
    ['policy.timeout', true],
    ['provider.auth', true],
  ] as const)('%s counts: %s', async (code, counts) => {
    const { breaker } = setup();
    for (const _ of [1, 2]) await breaker.execute(fail(new KeelError(code, code))).catch(() => undefined);
    expect(breaker.state).toBe(counts ? 'open' : 'closed');
  });

  it('counts errors that are not KeelErrors', async () => {
    const { breaker } = setup();
    for (const _ of [1, 2]) await breaker.execute(fail(new TypeError('fetch failed'))).catch(() => undefined);
    expect(breaker.state).toBe('open');
  });

  it.each([
    ['a DOMException AbortError', () => new DOMException('This operation was aborted', 'AbortError')],
    ['an Error named AbortError', () => Object.assign(new Error('aborted'), { name: 'AbortError' })],
    [
      'a fetch failure caused by an abort',
      () => new TypeError('fetch failed', { cause: new DOMException('aborted', 'AbortError') }),
    ],
  ])('does not count %s, whoever aborted', async (_label, makeError) => {
    const { breaker } = setup();
    const error = makeError();
    for (const _ of [1, 2, 3]) await expect(breaker.execute(fail(error))).rejects.toBe(error);
    expect(breaker.state).toBe('closed');
  });

  it('counts a TimeoutError, which says the dependency was too slow', async () => {
    const { breaker } = setup();
    const error = new DOMException('The operation timed out', 'TimeoutError');
    for (const _ of [1, 2]) await breaker.execute(fail(error)).catch(() => undefined);
    expect(breaker.state).toBe('open');
  });
});

describe('circuitBreaker: slow calls', () => {
  it('counts a success slower than slowCallMs as a failure, still returning its value', async () => {
    const { breaker, clock } = setup({ slowCallMs: 100 });
    const slow = async () => {
      const call = deferred();
      clock.setTimeout(() => call.resolve('slow but fine'), 101);
      return call.promise;
    };
    const first = breaker.execute(slow);
    await clock.advance(101);
    await expect(first).resolves.toBe('slow but fine');
    const second = breaker.execute(slow);
    await clock.advance(101);
    await expect(second).resolves.toBe('slow but fine');
    expect(breaker.state).toBe('open');
  });

  it('does not count a call of exactly slowCallMs', async () => {
    const { breaker, clock } = setup({ slowCallMs: 100 });
    for (const _ of [1, 2]) {
      const call = deferred();
      clock.setTimeout(() => call.resolve('ok'), 100);
      const pending = breaker.execute(call.fn);
      await clock.advance(100);
      await pending;
    }
    expect(breaker.state).toBe('closed');
  });

  it('never reads the clock on the closed success path unless slowCallMs or the strategy needs it', async () => {
    const clock = new FakeClock(0);
    const now = vi.spyOn(clock, 'now');
    const plain = circuitBreaker({ clock });
    for (const _ of [1, 2, 3]) await plain.execute(succeed);
    expect(now).not.toHaveBeenCalled();
    const timed = circuitBreaker({ clock, slowCallMs: 50 });
    await timed.execute(succeed);
    expect(now).toHaveBeenCalledTimes(2);
    const windowed = circuitBreaker({ clock, strategy: timeWindow() });
    await windowed.execute(succeed);
    expect(now).toHaveBeenCalledTimes(3);
  });
});

describe('circuitBreaker: isolate and reset', () => {
  it('isolates at once until every handle is disposed', async () => {
    const { breaker, transitions } = setup();
    const first = await breaker.isolate();
    const second = await breaker.isolate();
    const error = await rejection(breaker.execute(succeed));
    expect(error.data).toEqual({ breaker: 'circuit-breaker', state: 'isolated', remainingMs: null });
    expect(error.retryAfterMs).toBeUndefined();
    await first.dispose();
    await first.dispose(); // idempotent: must not release the second hold
    expect(breaker.state).toBe('isolated');
    await second.dispose();
    expect(breaker.state).toBe('closed');
    expect(transitions.map((item) => item.reason)).toEqual(['isolated', 'isolation-released']);
  });

  it('is isolated before isolate() resolves (in-memory store)', () => {
    const { breaker } = setup();
    void breaker.isolate();
    expect(breaker.state).toBe('isolated');
  });

  it('reset() releases isolation; handles from before it release nothing later', async () => {
    const { breaker } = setup();
    const old = await breaker.isolate();
    await breaker.reset();
    expect(breaker.state).toBe('closed');
    const current = await breaker.isolate();
    await old.dispose();
    expect(breaker.state).toBe('isolated');
    await current.dispose();
    expect(breaker.state).toBe('closed');
  });

  it('reset() closes an open breaker and forgets counted failures', async () => {
    const { breaker, trip } = setup();
    await trip();
    await breaker.reset();
    await expect(breaker.execute(succeed)).resolves.toBe('ok');
    await breaker.execute(fail(serverError())).catch(() => undefined);
    expect(breaker.state).toBe('closed');
  });
});

describe('circuitBreaker: serialisation', () => {
  it('continues from toJSON() through JSON, open period and window included', async () => {
    const { breaker, trip, clock } = setup({ halfOpenAfterMs: { initialMs: 1_000, factor: 2 } });
    await trip();
    await clock.advance(1_000);
    await breaker.execute(fail(serverError())).catch(() => undefined);
    const saved = JSON.parse(JSON.stringify(breaker));
    expect(saved).toMatchObject({ state: 'open', openUntilMs: 3_000, consecutiveOpens: 2 });

    const restored = circuitBreaker({
      clock,
      initialState: saved,
      halfOpenAfterMs: { initialMs: 1_000, factor: 2 },
    });
    expect((await rejection(restored.execute(succeed))).retryAfterMs).toBe(2_000);
    await clock.advance(2_000);
    await restored.execute(fail(serverError())).catch(() => undefined);
    expect(restored.toJSON()).toMatchObject({ state: 'open', consecutiveOpens: 3, openUntilMs: 7_000 });
  });

  it('stays serialisable and leaves open on time after thousands of opens in a row from an open period of 0', async () => {
    const clock = new FakeClock(0);
    // 5,000 opens in a row: 2^5000 is Infinity, and 0 × Infinity was NaN, a deadline that never passed.
    const breaker = circuitBreaker({
      clock,
      strategy: consecutive({ threshold: 1 }),
      halfOpenAfterMs: { initialMs: 0, factor: 2 },
      initialState: {
        version: 1,
        state: 'half-open',
        openUntilMs: null,
        consecutiveOpens: 5_000,
        probeSuccesses: 0,
        strategy: 'consecutive',
        window: null,
        probesUntilMs: null,
      },
    });
    const reopened: Array<number | undefined> = [];
    breaker.onBreak((transition) => reopened.push(transition.openForMs));
    await breaker.execute(fail(serverError())).catch(() => undefined);
    expect(reopened).toEqual([0]);
    const saved = breaker.toJSON();
    expect(saved.consecutiveOpens).toBe(5_001);
    expect(() => parseBreakerSnapshot(JSON.parse(JSON.stringify(saved)))).not.toThrow();
    await clock.advance(1);
    expect(breaker.state).toBe('half-open');
    await expect(breaker.execute(succeed)).resolves.toBe('ok');
  });

  it('caps the open period at maxMs after thousands of opens in a row', async () => {
    const clock = new FakeClock(0);
    const breaker = circuitBreaker({
      clock,
      strategy: consecutive({ threshold: 1 }),
      halfOpenAfterMs: { initialMs: 10, factor: 3, maxMs: 60_000 },
      initialState: {
        version: 1,
        state: 'half-open',
        openUntilMs: null,
        consecutiveOpens: 5_000,
        probeSuccesses: 0,
        strategy: 'consecutive',
        window: null,
        probesUntilMs: null,
      },
    });
    await breaker.execute(fail(serverError())).catch(() => undefined);
    expect(breaker.toJSON()).toMatchObject({ state: 'open', openUntilMs: 60_000 });
    await clock.advance(60_000);
    expect(breaker.state).toBe('half-open');
  });

  it('rejects a malformed initialState with config.invalid', () => {
    expect(() => circuitBreaker({ initialState: { version: 1, state: 'open' } as never })).toThrow(
      /initialState.openUntilMs must be a number of epoch milliseconds/,
    );
  });
});

describe('circuitBreaker: asynchronous store', () => {
  /** The in-memory store behind promises, as a shared store (Redis) would answer. */
  const asyncStore: BreakerStoreFactory = (options) => {
    const inner = new MemoryBreakerStore(options);
    const later = <T>(value: () => T) => Promise.resolve().then(value);
    const store: BreakerStore = {
      read: () => inner.read(),
      admit: () => later(() => inner.admit()),
      report: (ticket, outcome, error) => later(() => inner.report(ticket, outcome, error)),
      isolate: () => later(() => inner.isolate()),
      releaseIsolation: () => later(() => inner.releaseIsolation()),
      reset: () => later(() => inner.reset()),
    };
    return store;
  };

  it('runs the same state machine when every operation is a promise', async () => {
    const { breaker, trip, clock } = setup({ store: asyncStore });
    await expect(breaker.execute(succeed)).resolves.toBe('ok');
    await trip();
    expect((await rejection(breaker.execute(succeed))).data.state).toBe('open');
    await clock.advance(1_000);
    const probe = deferred();
    const running = breaker.execute(probe.fn);
    expect((await rejection(breaker.execute(succeed))).data.state).toBe('half-open');
    probe.resolve('up');
    await running;
    expect(breaker.state).toBe('closed');
    const handle = await breaker.isolate();
    expect(breaker.state).toBe('isolated');
    await handle.dispose();
    expect(breaker.state).toBe('closed');
  });

  it('hands its name to the store factory, so that a shared store can key its state by it', () => {
    const names: string[] = [];
    circuitBreaker({
      name: 'openai/gpt-4.1-mini',
      store: (options) => {
        names.push(options.name);
        return new MemoryBreakerStore(options);
      },
    });
    expect(names).toEqual(['openai/gpt-4.1-mini']);
  });

  it('fails the call with the store error when the store fails', async () => {
    const down = new KeelError('store.unavailable', 'redis down');
    const { breaker } = setup({
      store: (options) => {
        const inner = new MemoryBreakerStore(options);
        return {
          read: () => inner.read(),
          admit: () => Promise.reject(down),
          report: () => undefined,
          isolate: () => undefined,
          releaseIsolation: () => undefined,
          reset: () => undefined,
        };
      },
    });
    await expect(breaker.execute(succeed)).rejects.toBe(down);
  });
});

describe('circuitBreaker: options', () => {
  it.each([
    [{ name: '' }, /name must be a non-empty string, got ""/],
    [{ strategy: {} }, /strategy must be a strategy such as consecutive\(\)/],
    [{ halfOpenAfterMs: -1 }, /halfOpenAfterMs must be a finite number of milliseconds >= 0, got -1/],
    [{ halfOpenAfterMs: 'soon' }, /halfOpenAfterMs must be milliseconds or \{ initialMs, factor, maxMs \}/],
    [
      { halfOpenAfterMs: { initialMs: 1_000, factor: 0.5 } },
      /halfOpenAfterMs.factor must be a finite number >= 1/,
    ],
    [
      { halfOpenAfterMs: { initialMs: 1_000, maxMs: 10 } },
      /halfOpenAfterMs.maxMs must be .* >= 1000, got 10/,
    ],
    [
      { halfOpenAfterMs: { initial: 1 } },
      /Unknown circuitBreaker halfOpenAfterMs option initial \(known: initialMs, factor, maxMs\)/,
    ],
    [{ halfOpenMaxProbes: 0 }, /halfOpenMaxProbes must be an integer >= 1, got 0/],
    [{ probeSuccessesToClose: 1.5 }, /probeSuccessesToClose must be an integer >= 1/],
    [{ probeTimeoutMs: 0 }, /probeTimeoutMs must be a finite number of milliseconds >= 1, got 0/],
    [{ slowCallMs: Number.NaN }, /slowCallMs must be a finite number of milliseconds/],
    [{ isFailure: true }, /isFailure must be a function/],
    [{ store: {} }, /store must be a store factory/],
    [{ clock: {} }, /clock must be a Clock/],
    [{ threshold: 5 }, /Unknown circuitBreaker option threshold \(known: name, strategy, /],
  ])('rejects %j with config.invalid', (options, message) => {
    const create = () => circuitBreaker(options as never);
    expect(create).toThrow(message);
    const error = rejectionSync(create);
    expect(error.code).toBe('config.invalid');
  });

  it('rejects options that are not an object', () => {
    expect(() => circuitBreaker(5 as never)).toThrow(/options must be an object, got 5/);
  });

  it('defaults to 5 consecutive failures and 30 s open', async () => {
    const clock = new FakeClock(0);
    const breaker = circuitBreaker({ clock });
    for (const _ of [1, 2, 3, 4]) await breaker.execute(fail(serverError())).catch(() => undefined);
    expect(breaker.state).toBe('closed');
    await breaker.execute(fail(serverError())).catch(() => undefined);
    expect((await rejection(breaker.execute(succeed))).retryAfterMs).toBe(30_000);
    expect(breaker.name).toBe('circuit-breaker');
  });
});

function rejectionSync(create: () => unknown): KeelError {
  try {
    create();
  } catch (error) {
    if (KeelError.isInstance(error)) return error;
  }
  throw new Error('expected a KeelError');
}
