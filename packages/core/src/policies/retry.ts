import { classify } from '../errors/classify.js';
import { isControlSignal } from '../errors/control.js';
import { type JsonValue, KeelError } from '../errors/keel-error.js';
import { optionError } from '../options/option-error.js';
import { type Clock, systemClock } from './clock.js';
import { NEVER_ABORTED_SIGNAL, toContext, withAttempt } from './context.js';
import { type Delay, exponential, fullJitter, MAX_DELAY_MS, type RandomSource, safeMs } from './delays.js';
import { Emitter } from './events.js';
import type { Event, Policy, PolicyContext, PolicyFunction, SignalInput } from './policy.js';
import type { RetryBudget } from './retry-budget.js';
import { sleep } from './sleep.js';
import {
  rejectUnknownOptions,
  requireClock,
  requireFunction,
  requireNonNegativeNumber,
  requireOptionsObject,
  requirePositiveInteger,
} from './validate.js';

/** Options of {@link retry}. */
export interface RetryOptions {
  /** Total calls, the first included: 3 means one call and up to two retries. An integer ≥ 1 or Infinity. Defaults to 3. */
  maxAttempts?: number;
  /**
   * Which failures to retry. Called with the failure as a KeelError (`classify`'s verdict) and the number of the
   * attempt that failed; when
   * given it decides alone (consult `error.retryable` yourself to keep the default). Cancellations and control signals
   * never reach it. Defaults to retrying exactly the errors whose `retryable` is true.
   */
  retryIf?: (error: KeelError, attempt: number) => boolean;
  /** The wait before each retry. Defaults to `fullJitter(exponential({ initialMs: 500, factor: 2, maxMs: 30_000 }))`. */
  delay?: Delay;
  /** The random source handed to `delay`. Defaults to `Math.random`. */
  random?: RandomSource;
  /**
   * The longest Retry-After (an error's `retryAfterMs`) the policy will wait. A Retry-After replaces the computed
   * delay; one above this limit ends the retries at once with `policy.retries_exhausted` (`data.reason`
   * `retry_after_too_long`), since retrying sooner than the server asked only earns another refusal. Defaults to 60_000.
   */
  maxRetryAfterMs?: number;
  /**
   * Time after which no attempt starts, counted from the call to `execute`. The last wait is cut short to end at this
   * deadline; a Retry-After that would end past it gives up at once. A running attempt is not interrupted (wrap it in
   * `timeout` for that). Defaults to no deadline.
   */
  maxElapsedMs?: number;
  /**
   * A budget each retry draws one token from, before its wait (given back through `releaseRetry`, when the budget
   * has it, if the caller cancels during the wait); once it is spent, retrying stops at once with
   * `policy.budget_exhausted`. Defaults to none.
   */
  budget?: RetryBudget;
  /** Where time comes from. Defaults to the system clock. */
  clock?: Clock;
}

/** Emitted before each wait, once the retry is granted (by the budget too, when there is one). */
export interface RetryEvent {
  /** The attempt that failed. */
  readonly attempt: number;
  /** How long the policy waits before the next attempt. */
  readonly delayMs: number;
  readonly error: KeelError;
}

/** Why a retry policy stopped retrying. */
export type RetryGiveUpReason =
  | 'not_retryable'
  | 'max_attempts'
  | 'max_elapsed'
  | 'retry_after_too_long'
  | 'budget';

/** Emitted when the policy stops with a failure (cancellations and control signals excepted). */
export interface RetryGiveUpEvent {
  /** Attempts made. */
  readonly attempts: number;
  readonly reason: RetryGiveUpReason;
  /** The last attempt's failure, classified. */
  readonly error: KeelError;
}

/** Emitted when an attempt succeeds. */
export interface RetrySuccessEvent {
  /** Attempts made, the successful one included. */
  readonly attempts: number;
}

/** A retry policy with its events. */
export interface RetryPolicy extends Policy {
  readonly onRetry: Event<RetryEvent>;
  readonly onGiveUp: Event<RetryGiveUpEvent>;
  readonly onSuccess: Event<RetrySuccessEvent>;
}

/**
 * Retries a function while its failures are retryable, waiting a (jittered, by default) delay between attempts.
 * Each failure is classified with `classify` (a KeelError as it is; a raw `ECONNRESET`, a 429 response and so on
 * by their kind), and its `retryable` flag decides unless `retryIf` is given.
 *
 * - A failure that is not retryable is rethrown unchanged, as the function threw it.
 * - When attempts, time (`maxElapsedMs`) or an acceptable Retry-After run out, it throws `policy.retries_exhausted`
 *   (`data`: `attempts`, `reason`), with the last failure, classified, as `cause`.
 * - When the `budget` refuses a retry, it throws `policy.budget_exhausted` (`data.attempts`), last failure as `cause`.
 * - A cancellation (the caller's signal aborting: before, during or after an attempt, or during a wait) ends it at
 *   once with the signal's reason; a control signal thrown by the function is rethrown as it is. Neither is retried.
 *
 * The function receives a context whose `attempt` is 1, 2, ...; its `signal` is only created if the function reads it.
 * That signal is the caller's, shared by every attempt and not aborted between them: to end what an attempt that
 * timed out started before the next one runs, give each attempt its own with a timeout inside the retry
 * (`compose(retry(), timeout(ms))`), whose signal aborts when its attempt times out (and never because it settled,
 * so the successful attempt's `fetch` Response stays readable).
 *
 * @example
 *   const policy = retry({ maxAttempts: 4, maxElapsedMs: 60_000, budget });
 *   policy.onRetry(({ attempt, delayMs, error }) => log(`attempt ${attempt} failed (${error.code}), waiting ${delayMs} ms`));
 *   const response = await policy.execute(({ signal }) => fetch(url, { signal }), callerSignal);
 */
export function retry(options: RetryOptions = {}): RetryPolicy {
  return retryOf(validate(options));
}

/**
 * Checks `options` once (as {@link retry} does) and returns a maker of retry policies that differ only in their
 * budget and `retryIf`, which are taken as they are, unchecked: for a caller that makes one policy per run, say, and
 * would otherwise pay for the checks each time.
 */
export function retryMaker(
  options: Omit<RetryOptions, 'budget' | 'retryIf'>,
): (budget: RetryBudget | undefined, retryIf: RetryOptions['retryIf']) => RetryPolicy {
  const settings = validate(options);
  return (budget, retryIf) => retryOf({ ...settings, budget, retryIf });
}

function retryOf(settings: Settings): RetryPolicy {
  const { maxAttempts, retryIf, delay, random, maxRetryAfterMs, maxElapsedMs, budget, clock } = settings;
  const retries = new Emitter<RetryEvent>();
  const giveUps = new Emitter<RetryGiveUpEvent>();
  const successes = new Emitter<RetrySuccessEvent>();

  const giveUp = (
    attempts: number,
    reason: RetryGiveUpReason,
    error: KeelError,
    thrown: unknown,
  ): unknown => {
    if (giveUps.hasListeners) giveUps.emit({ attempts, reason, error });
    return thrown;
  };

  const exhausted = (
    attempts: number,
    reason: Exclude<RetryGiveUpReason, 'not_retryable' | 'budget'>,
    error: KeelError,
    explanation: string,
    data: Record<string, JsonValue> = {},
  ): unknown => {
    const message = `Gave up after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${explanation}. Last error: ${error.message}`;
    return giveUp(
      attempts,
      reason,
      error,
      new KeelError('policy.retries_exhausted', message, {
        data: { attempts, reason, ...data },
        cause: error,
      }),
    );
  };

  const budgetExhausted = (attempt: number, error: KeelError): unknown => {
    const message = `Retry budget spent after ${attempt} attempt${attempt === 1 ? '' : 's'}. Last error: ${error.message}`;
    return giveUp(
      attempt,
      'budget',
      error,
      new KeelError('policy.budget_exhausted', message, { data: { attempts: attempt }, cause: error }),
    );
  };

  async function execute<T>(fn: PolicyFunction<T>, signal?: SignalInput): Promise<T> {
    const context = toContext(signal);
    budget?.recordRequest();
    const deadlineMs = maxElapsedMs === Number.POSITIVE_INFINITY ? maxElapsedMs : clock.now() + maxElapsedMs;
    // Made at the first failure: most calls succeed at once.
    let delays: DelayState | undefined;
    for (let attempt = 1; ; attempt++) {
      if (context.aborted) throw context.signal.reason;
      try {
        const value = await fn(withAttempt(context, attempt));
        if (successes.hasListeners) successes.emit({ attempts: attempt });
        return value;
      } catch (thrown) {
        // The failure path lives in its own functions: an async function's frame holds every local it has, and
        // this one is made for each call, most of which succeed at once.
        delays ??= { previousMs: undefined };
        await waitToRetry(context, thrown, attempt, deadlineMs, delays);
      }
    }
  }

  /** After a failed attempt: throws what the caller gets, or waits for the retry (taking its budget token). */
  function waitToRetry(
    context: PolicyContext,
    thrown: unknown,
    attempt: number,
    deadlineMs: number,
    delays: DelayState,
  ): Promise<void> {
    const delayMs = retryDelayOrThrow(context, thrown, attempt, deadlineMs, delays);
    // Reading the signal here (a failure path) may create it; waiting on the shared never-aborted one is pointless.
    const waitSignal = context.signal;
    return sleep(delayMs, clock, waitSignal === NEVER_ABORTED_SIGNAL ? undefined : waitSignal).catch(
      (reason: unknown) => {
        // Cancelled while waiting: the retry never runs, so its token goes back.
        budget?.releaseRetry?.();
        throw reason;
      },
    );
  }

  /** The wait before the next attempt (its budget token taken, `onRetry` told); throws when there is none. */
  function retryDelayOrThrow(
    context: PolicyContext,
    thrown: unknown,
    attempt: number,
    deadlineMs: number,
    delays: DelayState,
  ): number {
    if (isControlSignal(thrown)) throw thrown;
    // Whatever the function threw after the caller cancelled, the caller gets their own reason back.
    if (context.aborted) throw context.signal.reason;
    // HTTP-date Retry-After headers are read against the policy's clock, like every other wait here.
    const error = classify(thrown, { nowMs: clock.now() });
    if (!(retryIf === undefined ? error.retryable : retryIf(error, attempt))) {
      throw giveUp(attempt, 'not_retryable', error, thrown);
    }
    if (attempt >= maxAttempts)
      throw exhausted(attempt, 'max_attempts', error, `maxAttempts (${maxAttempts}) reached`);
    let delayMs: number;
    const retryAfterMs = error.retryAfterMs;
    if (retryAfterMs !== undefined && retryAfterMs >= 0) {
      if (retryAfterMs > maxRetryAfterMs) {
        throw exhausted(
          attempt,
          'retry_after_too_long',
          error,
          `asked to wait ${retryAfterMs} ms, more than maxRetryAfterMs (${maxRetryAfterMs})`,
          { retryAfterMs, maxRetryAfterMs },
        );
      }
      delayMs = safeMs(retryAfterMs);
    } else {
      delayMs = safeMs(delay.next({ attempt, previousMs: delays.previousMs, random }));
      delays.previousMs = delayMs;
    }
    if (deadlineMs !== Number.POSITIVE_INFINITY) {
      const leftMs = deadlineMs - clock.now();
      const tooLate = leftMs <= 0 || (retryAfterMs !== undefined && retryAfterMs > leftMs);
      if (tooLate)
        throw exhausted(attempt, 'max_elapsed', error, `maxElapsedMs (${maxElapsedMs}) reached`, {
          maxElapsedMs,
        });
      delayMs = Math.min(delayMs, leftMs);
    }
    // The token is taken before the wait, so that a spent budget gives up at once rather than after a pointless
    // wait, and `onRetry` only ever announces a retry that was granted.
    if (budget !== undefined && !budget.tryAcquireRetry()) throw budgetExhausted(attempt, error);
    if (retries.hasListeners) retries.emit({ attempt, delayMs, error });
    return delayMs;
  }

  return { execute, onRetry: retries.event, onGiveUp: giveUps.event, onSuccess: successes.event };
}

/** The previous computed delay of one call, for delays that depend on it (decorrelated jitter). */
interface DelayState {
  previousMs: number | undefined;
}

interface Settings {
  maxAttempts: number;
  retryIf: RetryOptions['retryIf'];
  delay: Delay;
  random: RandomSource;
  maxRetryAfterMs: number;
  maxElapsedMs: number;
  budget: RetryBudget | undefined;
  clock: Clock;
}

const FACTORY = 'retry';

const KNOWN_OPTIONS = [
  'maxAttempts',
  'retryIf',
  'delay',
  'random',
  'maxRetryAfterMs',
  'maxElapsedMs',
  'budget',
  'clock',
];

function validate(options: RetryOptions): Settings {
  requireOptionsObject(options, FACTORY, '{ maxAttempts: 3 }');
  rejectUnknownOptions(options, KNOWN_OPTIONS, FACTORY);
  const delay = options.delay ?? fullJitter(exponential({ initialMs: 500, factor: 2, maxMs: 30_000 }));
  if (typeof delay?.next !== 'function') {
    throw optionError({
      where: FACTORY,
      option: 'delay',
      message: 'delay must be a Delay, such as fullJitter(exponential())',
    });
  }
  const budget = options.budget;
  if (
    budget !== undefined &&
    (typeof budget?.tryAcquireRetry !== 'function' ||
      typeof budget.recordRequest !== 'function' ||
      (budget.releaseRetry !== undefined && typeof budget.releaseRetry !== 'function'))
  ) {
    throw optionError({
      where: FACTORY,
      option: 'budget',
      message: 'budget must be a RetryBudget, such as retryBudget()',
    });
  }
  return {
    // The first call counts: 1 means no retry at all.
    maxAttempts: requirePositiveInteger(options.maxAttempts ?? 3, 'maxAttempts', FACTORY, {
      allowInfinity: true,
    }),
    retryIf:
      options.retryIf === undefined
        ? undefined
        : requireFunction(options.retryIf, 'retryIf', FACTORY, '(error, attempt) => boolean'),
    delay,
    random: requireFunction(options.random ?? Math.random, 'random', FACTORY, 'returning a number in [0, 1)'),
    maxRetryAfterMs: requireNonNegativeNumber(options.maxRetryAfterMs ?? 60_000, 'maxRetryAfterMs', FACTORY, {
      maximum: MAX_DELAY_MS,
    }),
    // Infinity: no deadline. Never armed as a timer; waits are cut to the time left.
    maxElapsedMs: requireNonNegativeNumber(
      options.maxElapsedMs ?? Number.POSITIVE_INFINITY,
      'maxElapsedMs',
      FACTORY,
      { minimum: Number.MIN_VALUE },
    ),
    budget,
    clock: requireClock(options.clock ?? systemClock, FACTORY),
  };
}
