// Control signals for bulkhead, rateLimiter, fallback, hedge, compose and noop: a cancellation ends the call with the
// signal's reason and a thrown control signal passes through untouched. Neither is ever replaced by a fallback.
import { describe, expect, it } from 'vitest';
import { CONTROL_SIGNAL } from '../errors/control.js';
import { KeelError } from '../errors/keel-error.js';
import { FakeClock, flushMicrotasks } from '../testing/fake-clock.js';
import { bulkhead } from './bulkhead.js';
import { type ComposablePolicy, compose, noop } from './compose.js';
import { fallback } from './fallback.js';
import { hedge } from './hedge.js';
import type { PolicyContext } from './policy.js';
import { rateLimiter } from './rate-limiter.js';

class Interrupt {
  readonly [CONTROL_SIGNAL] = true as const;
  constructor(readonly question: string) {}
}

interface Subject {
  policy: ComposablePolicy;
  clock: FakeClock;
  /** How many times a fallback alternative ran. */
  alternativeRuns: () => number;
}

function withFallbackCounter(build: (alternative: () => string, clock: FakeClock) => ComposablePolicy) {
  return (): Subject => {
    const clock = new FakeClock();
    let runs = 0;
    const policy = build(() => {
      runs++;
      return 'replaced';
    }, clock);
    return { policy, clock, alternativeRuns: () => runs };
  };
}

const subjects: Array<[string, () => Subject]> = [
  ['bulkhead', withFallbackCounter(() => bulkhead({ maxConcurrent: 1, maxQueued: 1 }))],
  [
    'rateLimiter (reject)',
    withFallbackCounter((_, clock) => rateLimiter({ ratePerSecond: 1, bucketSize: 5, clock })),
  ],
  [
    'rateLimiter (wait)',
    withFallbackCounter((_, clock) => rateLimiter({ ratePerSecond: 1, bucketSize: 5, mode: 'wait', clock })),
  ],
  ['fallback', withFallbackCounter((alternative) => fallback([alternative]))],
  ['hedge', withFallbackCounter((_, clock) => hedge({ delayMs: 100, clock }))],
  [
    'compose',
    withFallbackCounter((alternative, clock) =>
      compose(
        fallback([alternative]),
        bulkhead({ maxConcurrent: 4 }),
        rateLimiter({ ratePerSecond: 10, mode: 'wait', clock }),
        hedge({ delayMs: 100, clock }),
      ),
    ),
  ],
  ['noop', withFallbackCounter(() => noop)],
];

/** A function that rejects with its own AbortError when its signal aborts, as fetch does. */
function abortable(calls: PolicyContext[]) {
  return (context: PolicyContext) => {
    calls.push(context);
    return new Promise<string>((_, reject) => {
      context.signal.addEventListener('abort', () =>
        reject(new DOMException('This operation was aborted', 'AbortError')),
      );
    });
  };
}

describe.each(subjects)('%s and control signals', (_, makeSubject) => {
  it('ends with the reason, without calling the function, when the caller aborted before', async () => {
    const { policy, alternativeRuns } = makeSubject();
    const controller = new AbortController();
    const reason = new KeelError('run.cancelled', 'user pressed stop');
    controller.abort(reason);
    let calls = 0;
    await expect(policy.execute(() => calls++, controller.signal)).rejects.toBe(reason);
    expect(calls).toBe(0);
    expect(alternativeRuns()).toBe(0);
  });

  it('ends with the reason when the caller aborts during the call', async () => {
    const { policy, alternativeRuns } = makeSubject();
    const controller = new AbortController();
    const calls: PolicyContext[] = [];
    const result = policy.execute(abortable(calls), controller.signal);
    await flushMicrotasks();
    expect(calls).toHaveLength(1);
    const reason = new Error('caller cancelled');
    controller.abort(reason);
    await expect(result).rejects.toBe(reason);
    expect(alternativeRuns()).toBe(0);
  });

  it('ends with the reason when the function fails some other way after the abort', async () => {
    const { policy, alternativeRuns } = makeSubject();
    const controller = new AbortController();
    let failLater!: (error: unknown) => void;
    const result = policy.execute(
      () =>
        new Promise<string>((_, reject) => {
          failLater = reject;
        }),
      controller.signal,
    );
    await flushMicrotasks();
    const reason = new Error('caller cancelled');
    controller.abort(reason);
    failLater(new Error('socket closed'));
    await expect(result).rejects.toBe(reason);
    expect(alternativeRuns()).toBe(0);
  });

  it('passes a control signal thrown by the function through untouched', async () => {
    const { policy, alternativeRuns } = makeSubject();
    const interrupt = new Interrupt('approve the payment?');
    await expect(
      policy.execute(() => {
        throw interrupt;
      }),
    ).rejects.toBe(interrupt);
    const asyncInterrupt = new Interrupt('approve again?');
    await expect(policy.execute(() => Promise.reject(asyncInterrupt))).rejects.toBe(asyncInterrupt);
    expect(alternativeRuns()).toBe(0);
  });

  it('passes a control signal through even while the caller’s signal is aborted', async () => {
    const { policy } = makeSubject();
    const controller = new AbortController();
    let failLater!: (error: unknown) => void;
    const result = policy.execute(
      () =>
        new Promise<string>((_, reject) => {
          failLater = reject;
        }),
      controller.signal,
    );
    await flushMicrotasks();
    controller.abort(new Error('cancelled'));
    const interrupt = new Interrupt('stop here');
    failLater(interrupt);
    await expect(result).rejects.toBe(interrupt);
  });
});

describe('control signals while waiting', () => {
  it('bulkhead: an abort while queued ends with the reason', async () => {
    const policy = bulkhead({ maxConcurrent: 1, maxQueued: 1 });
    const running = policy.execute(() => new Promise<void>(() => {}));
    const controller = new AbortController();
    const queued = policy.execute(() => 'never', controller.signal);
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(queued).rejects.toBe(reason);
    void running;
  });

  it('rateLimiter: an abort while waiting for a token ends with the reason', async () => {
    const clock = new FakeClock();
    const policy = rateLimiter({ ratePerSecond: 1, bucketSize: 1, mode: 'wait', clock });
    await policy.execute(() => 'first');
    const controller = new AbortController();
    const waiting = policy.execute(() => 'never', controller.signal);
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
  });

  it('fallback: an alternative’s control signal or cancellation is not replaced by the next alternative', async () => {
    const interrupt = new Interrupt('ask the user');
    let laterRuns = 0;
    const policy = fallback([
      () => {
        throw interrupt;
      },
      () => laterRuns++,
    ]);
    await expect(policy.execute(() => Promise.reject(new Error('primary failed')))).rejects.toBe(interrupt);

    const controller = new AbortController();
    const reason = new Error('cancelled during the first alternative');
    const cancelling = fallback([
      () => {
        controller.abort(reason);
        throw new Error('alternative failed');
      },
      () => laterRuns++,
    ]);
    await expect(
      cancelling.execute(() => Promise.reject(new Error('primary failed')), controller.signal),
    ).rejects.toBe(reason);
    expect(laterRuns).toBe(0);
  });

  it('fallback: an abort error from inside (classified run.cancelled) is rethrown, never replaced', async () => {
    let runs = 0;
    const policy = fallback([() => runs++]);
    const abortError = new DOMException('The operation was aborted', 'AbortError');
    await expect(policy.execute(() => Promise.reject(abortError))).rejects.toBe(abortError);
    const cancelled = new KeelError('run.cancelled', 'the run was cancelled');
    await expect(policy.execute(() => Promise.reject(cancelled))).rejects.toBe(cancelled);
    expect(runs).toBe(0);
  });

  it('hedge: a cancellation after a hedge started aborts every attempt and ends at once', async () => {
    const clock = new FakeClock();
    const policy = hedge({ delayMs: 100, maxHedgedAttempts: 2, clock });
    const controller = new AbortController();
    const contexts: PolicyContext[] = [];
    // The attempts ignore their signals: the hedge must still end at once.
    const result = policy.execute((context) => {
      contexts.push(context);
      return new Promise<string>(() => {});
    }, controller.signal);
    await clock.advance(100);
    expect(contexts).toHaveLength(2);
    const reason = new Error('cancelled');
    controller.abort(reason);
    await expect(result).rejects.toBe(reason);
    expect(contexts.map((context) => context.signal.reason)).toEqual([reason, reason]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('hedge: a cancellation before any hedge ends the call when the delay ends, starting no hedge', async () => {
    const clock = new FakeClock();
    const policy = hedge({ delayMs: 100, clock });
    const controller = new AbortController();
    let calls = 0;
    const result = policy.execute(() => {
      calls++;
      return new Promise<string>(() => {});
    }, controller.signal);
    let outcome: unknown;
    result.catch((error: unknown) => {
      outcome = error;
    });
    const reason = new Error('cancelled');
    controller.abort(reason);
    await clock.advance(100);
    expect(outcome).toBe(reason);
    expect(calls).toBe(1);
  });

  it('hedge: a control signal from one attempt ends the call at once and aborts the others', async () => {
    const clock = new FakeClock();
    const policy = hedge({ delayMs: 100, clock });
    const attempts: Array<{ context: PolicyContext; reject: (error: unknown) => void }> = [];
    const result = policy.execute(
      (context) =>
        new Promise<string>((_, reject) => {
          attempts.push({ context, reject });
        }),
    );
    await clock.advance(100);
    const interrupt = new Interrupt('approval needed');
    attempts[1]!.reject(interrupt);
    await expect(result).rejects.toBe(interrupt);
    expect(attempts[0]!.context.signal.aborted).toBe(true);
  });
});
