import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KeelError } from '../errors/keel-error.js';
import { FakeClock, flushMicrotasks } from '../testing/fake-clock.js';
import type { Clock } from './clock.js';
import { compose } from './compose.js';
import { toContext } from './context.js';
import { type FallbackEvent, fallback } from './fallback.js';
import type { Policy, PolicyContext, PolicyFunction, SignalInput } from './policy.js';
import { timeout } from './timeout.js';

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

const rateLimited = () => new KeelError('provider.rate_limited', '429 from primary', { retryAfterMs: 700 });
const overloaded = () => new KeelError('provider.overloaded', 'backup overloaded', { retryAfterMs: 2_000 });

/** A timeout the way peers wrote it: it races a timer and leaves the function's promise to settle later. */
function racingTimeout(timeoutMs: number, clock: Clock): Policy {
  return {
    execute<T>(fn: PolicyFunction<T>, signal?: SignalInput): Promise<T> {
      const timedOut = new Promise<never>((_, reject) => {
        clock.setTimeout(
          () => reject(new KeelError('network.timeout', `no answer in ${timeoutMs} ms`)),
          timeoutMs,
        );
      });
      return Promise.race([Promise.resolve(fn(toContext(signal))), timedOut]);
    },
  };
}

describe('fallback', () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(() => {
    process.off('unhandledRejection', onUnhandled);
  });

  it('validates its arguments with messages naming the option', () => {
    const bad: Array<[unknown, unknown, RegExp]> = [
      [[], undefined, /alternatives must be a non-empty array/],
      ['nope', undefined, /alternatives must be a non-empty array/],
      [[{ name: 'x' }], undefined, /alternatives\[0\] must be a function or an object with a run function/],
      [[() => 1, { run: () => 1, when: 'yes' }], undefined, /alternatives\[1\]\.when must be a function/],
      [[{ run: () => 1, name: '' }], undefined, /alternatives\[0\]\.name must be a non-empty string/],
      [[() => 1], { when: 5 }, /options\.when must be a function/],
      [[() => 1], { classify: 'x' }, /options\.classify must be a function/],
    ];
    for (const [alternatives, options, message] of bad) {
      let caught: unknown;
      try {
        fallback(alternatives as never, options as never);
      } catch (error) {
        caught = error;
      }
      expect(KeelError.isInstance(caught) && caught.code).toBe('config.invalid');
      expect((caught as Error).message).toMatch(message);
    }
  });

  it('returns the primary result without touching the alternatives', async () => {
    let alternativeRuns = 0;
    const events: FallbackEvent[] = [];
    const policy = fallback([() => alternativeRuns++]);
    policy.onFallback((event) => events.push(event));
    await expect(policy.execute(() => 'primary')).resolves.toBe('primary');
    expect(alternativeRuns).toBe(0);
    expect(events).toEqual([]);
  });

  it('tries alternatives in order, skipping those whose condition does not match', async () => {
    const seen: Array<[string, string]> = [];
    const events: FallbackEvent[] = [];
    const policy = fallback([
      {
        name: 'only-for-auth',
        when: (error) => error.code === 'provider.auth',
        run: () => 'wrong',
      },
      {
        name: 'backup',
        when: (error) => error.code === 'provider.rate_limited',
        run: (_, error) => {
          seen.push(['backup', error.code]);
          throw overloaded();
        },
      },
      {
        name: 'local',
        when: (error) => error.code === 'provider.overloaded',
        run: (_, error) => {
          seen.push(['local', error.code]);
          return 'local answer';
        },
      },
    ]);
    policy.onFallback((event) => events.push(event));
    await expect(
      policy.execute(() => {
        throw rateLimited();
      }),
    ).resolves.toBe('local answer');
    // Each alternative sees the most recent failure.
    expect(seen).toEqual([
      ['backup', 'provider.rate_limited'],
      ['local', 'provider.overloaded'],
    ]);
    expect(events.map((event) => [event.name, event.position, event.error.code])).toEqual([
      ['backup', 2, 'provider.rate_limited'],
      ['local', 3, 'provider.overloaded'],
    ]);
  });

  it('ends with an error carrying the whole chain when every alternative fails', async () => {
    const policy = fallback([
      () => {
        throw overloaded();
      },
      { name: 'last resort', run: () => Promise.reject(new Error('disk full')) },
    ]);
    const error = (await rejectionOf(
      policy.execute(() => {
        throw rateLimited();
      }),
    )) as KeelError;
    expect(KeelError.isInstance(error)).toBe(true);
    // The last failure decides how outer policies treat it.
    expect(error.code).toBe('internal.unexpected');
    expect(error.data).toEqual({
      failures: [
        { name: 'primary', code: 'provider.rate_limited', message: '429 from primary' },
        { name: 'fallback 1', code: 'provider.overloaded', message: 'backup overloaded' },
        { name: 'last resort', code: 'internal.unexpected', message: 'disk full' },
      ],
    });
    expect(error.message).toBe(
      'every fallback failed: primary (provider.rate_limited: 429 from primary); ' +
        'fallback 1 (provider.overloaded: backup overloaded); last resort (internal.unexpected: disk full)',
    );
    expect((error.cause as KeelError).code).toBe('internal.unexpected');
    expect(((error.cause as KeelError).cause as Error).message).toBe('disk full');
    const copy = KeelError.fromJSON(JSON.parse(JSON.stringify(error)));
    expect(copy.data).toEqual(error.data);
  });

  it('keeps the last failure’s retryability and retryAfterMs on the chain error', async () => {
    const policy = fallback([
      () => {
        throw overloaded();
      },
    ]);
    const error = (await rejectionOf(policy.execute(() => Promise.reject(rateLimited())))) as KeelError;
    expect(error.code).toBe('provider.overloaded');
    expect(error.retryable).toBe(true);
    expect(error.retryAfterMs).toBe(2_000);
  });

  it('rethrows the primary’s own error, untouched, when no alternative matches', async () => {
    const policy = fallback([{ when: (error) => error.code === 'provider.auth', run: () => 'x' }]);
    const original = new TypeError('not even a KeelError');
    await expect(policy.execute(() => Promise.reject(original))).rejects.toBe(original);
    const keelError = rateLimited();
    await expect(policy.execute(() => Promise.reject(keelError))).rejects.toBe(keelError);
  });

  it('classifies thrown values for conditions: KeelErrors as they are, others with classify', async () => {
    const seen: KeelError[] = [];
    const original = new RangeError('boom');
    const policy = fallback([
      (_, error) => {
        seen.push(error);
        return 'ok';
      },
    ]);
    await policy.execute(() => {
      throw original;
    });
    expect(seen[0]!.code).toBe('internal.unexpected');
    expect(seen[0]!.cause).toBe(original);
    await policy.execute(() => {
      throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    });
    expect(seen[1]!.code).toBe('network.connection');

    const classified = fallback([(_, error) => error.code], {
      classify: () => new KeelError('tool.failed', 'classified'),
      when: (error) => error.code === 'tool.failed',
    });
    await expect(classified.execute(() => Promise.reject(original))).resolves.toBe('tool.failed');
  });

  it('hands each alternative the caller’s context', async () => {
    const controller = new AbortController();
    const contexts: PolicyContext[] = [];
    const policy = fallback([
      (context) => {
        contexts.push(context);
        return 1;
      },
    ]);
    await policy.execute(() => {
      throw rateLimited();
    }, controller.signal);
    expect(contexts[0]!.signal).toBe(controller.signal);
  });

  it('runs the fallback once when a timeout is followed by the primary’s late rejection', async () => {
    const clock = new FakeClock();
    let alternativeRuns = 0;
    const policy = compose(
      fallback([
        () => {
          alternativeRuns++;
          return 'fallback answer';
        },
      ]),
      racingTimeout(1_000, clock),
    );
    let rejectLate!: (error: unknown) => void;
    const result = policy.execute(
      () =>
        new Promise<string>((_, reject) => {
          rejectLate = reject;
        }),
    );
    await clock.advance(1_000);
    await expect(result).resolves.toBe('fallback answer');
    rejectLate(new Error('late rejection of the timed-out call'));
    await flushMicrotasks();
    expect(alternativeRuns).toBe(1);
    expect(unhandled).toEqual([]);
  });

  it('runs the fallback once when keel’s forced timeout fires and the primary rejects later', async () => {
    const clock = new FakeClock();
    const alternativeErrors: string[] = [];
    const policy = compose(
      fallback([
        (_, error) => {
          alternativeErrors.push(error.code);
          return 'fallback answer';
        },
      ]),
      timeout(1_000, { strategy: 'forced', clock }),
    );
    let rejectLate!: (error: unknown) => void;
    const result = policy.execute(
      () =>
        new Promise<string>((_, reject) => {
          rejectLate = reject;
        }),
    );
    await clock.advance(1_000);
    await expect(result).resolves.toBe('fallback answer');
    rejectLate(new Error('late rejection of the timed-out call'));
    await flushMicrotasks();
    expect(alternativeErrors).toEqual(['policy.timeout']);
    expect(unhandled).toEqual([]);
  });

  it('runs the fallback once even when the primary’s thenable rejects twice', async () => {
    let alternativeRuns = 0;
    const policy = fallback([
      () => {
        alternativeRuns++;
        return 'fallback answer';
      },
    ]);
    let rejectAgain!: () => void;
    const misbehaving: PromiseLike<string> = {
      // biome-ignore lint/suspicious/noThenProperty: a hand-made thenable that settles twice on purpose
      then(_onFulfilled, onRejected) {
        onRejected?.(new KeelError('network.timeout', 'timed out'));
        rejectAgain = () => onRejected?.(new Error('late rejection'));
        return Promise.resolve() as never;
      },
    };
    await expect(policy.execute(() => misbehaving)).resolves.toBe('fallback answer');
    rejectAgain();
    await flushMicrotasks();
    expect(alternativeRuns).toBe(1);
    expect(unhandled).toEqual([]);
  });

  it('types its result as the function’s or the alternatives’', async () => {
    const policy = fallback([{ run: () => 'text' }]);
    const result: string | number = await policy.execute(() => 42);
    expect(result).toBe(42);
    // @ts-expect-error: the result may be the alternative's string
    const narrow: number = await policy.execute(() => 42);
    expect(narrow).toBe(42);
  });
});
