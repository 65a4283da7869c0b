import { isControlSignal } from '../errors/control.js';
import { type Clock, systemClock, type TimerHandle } from './clock.js';
import { NEVER_ABORTED_SIGNAL, toContext } from './context.js';
import { MAX_DELAY_MS } from './delays.js';
import { Emitter } from './events.js';
import type { Event, Policy, PolicyContext, PolicyFunction, SignalInput } from './policy.js';
import {
  rejectUnknownOptions,
  requireClock,
  requireNonNegativeInteger,
  requireNonNegativeNumber,
  requireOptionsObject,
} from './validate.js';

/** Options of {@link hedge}. */
export interface HedgeOptions {
  /**
   * How long an attempt may run unsettled before the next one starts, in milliseconds. Required: from 0 to
   * 2^31 - 1 (`MAX_DELAY_MS`, the longest a timer can wait).
   */
  delayMs: number;
  /** How many extra attempts may start, each `delayMs` after the previous one. Defaults to 1. 0 disables hedging. */
  maxHedgedAttempts?: number;
  /** Where time comes from. Defaults to the system clock. */
  clock?: Clock;
}

/** Emitted when a hedged attempt starts. */
export interface HedgeEvent {
  /** The attempt that starts: 2 for the first hedge. */
  readonly attempt: number;
  /** The configured delay that elapsed since the previous attempt started. */
  readonly delayMs: number;
}

/** Hedged requests: a slow call gets company, the first success wins. */
export interface HedgePolicy extends Policy {
  /** Fires when a hedged attempt starts. */
  readonly onHedge: Event<HedgeEvent>;
}

/**
 * An attempt's own context. Its signal is created only when read, aborts when this attempt loses or when the caller's
 * signal aborts, and stops following the caller once the attempt or the hedge has settled. An attempt that settles
 * itself (the winner, or one that failed) keeps its signal alive: what the winner returned stays usable.
 */
class AttemptContext implements PolicyContext {
  private controller: AbortController | undefined;
  private abortReason: unknown;
  private lost = false;
  private settled = false;
  private unfollow: (() => void) | undefined;

  constructor(private readonly parent: PolicyContext) {}

  get attempt(): number {
    return this.parent.attempt;
  }

  /** Whether this attempt is over: it settled, or it lost and was aborted. */
  get ended(): boolean {
    return this.lost || this.settled;
  }

  get aborted(): boolean {
    if (this.controller !== undefined) return this.controller.signal.aborted;
    return this.lost || this.parent.aborted;
  }

  get signal(): AbortSignal {
    if (this.controller !== undefined) return this.controller.signal;
    // Settled before it was read: nothing of the attempt is left to end, so the caller's signal serves.
    if (this.settled) return this.parent.signal;
    const controller = new AbortController();
    this.controller = controller;
    if (this.lost) {
      controller.abort(this.abortReason);
    } else if (this.parent.aborted) {
      controller.abort(this.parent.signal.reason);
    } else if (this.parent.signal !== NEVER_ABORTED_SIGNAL) {
      const parentSignal = this.parent.signal;
      const onAbort = () => controller.abort(parentSignal.reason);
      parentSignal.addEventListener('abort', onAbort, { once: true });
      this.unfollow = () => parentSignal.removeEventListener('abort', onAbort);
    }
    return controller.signal;
  }

  /** The attempt lost (another won, or the hedge ended without it): its work is abandoned. */
  abort(reason: unknown): void {
    if (this.ended) return;
    this.lost = true;
    this.abortReason = reason;
    this.controller?.abort(reason);
    this.release();
  }

  /** The attempt's function settled: its signal is left alive for what it returned. */
  settle(): void {
    if (this.ended) return;
    this.settled = true;
    this.release();
  }

  /** Stops listening to the caller's signal, so a long-lived caller signal does not collect listeners. */
  private release(): void {
    this.unfollow?.();
    this.unfollow = undefined;
  }
}

/**
 * Hedged requests. Starts the function; if it has not settled after `delayMs`, starts it again (up to
 * `maxHedgedAttempts` more times, each `delayMs` after the previous). The first success wins and every other attempt
 * is aborted. Each attempt has its own lazily created signal, so an attempt that never reads its signal costs no
 * AbortController; it aborts when the attempt loses (or the caller cancels), never because the attempt settled: the
 * winner's signal stays alive, so a `fetch` Response it returned can still be read.
 *
 * An attempt that fails does not start another (that is `retry`'s job): the hedge waits for the attempts still
 * running, and when all have failed rejects with the error of the attempt that failed last. A thrown control signal
 * ends the hedge at once, untouched. The caller's cancellation aborts every attempt and ends the hedge with the
 * signal's reason: at once after a hedge has started, otherwise as soon as the running attempt gives up or the delay
 * ends (before any hedge, the caller's signal is not read, so no AbortController is created for it).
 *
 * @example
 *   const fast = hedge({ delayMs: 800, maxHedgedAttempts: 1 });
 *   const response = await fast.execute(({ signal }) => fetch(url, { signal }), callerSignal);
 *   const page = await response.text(); // the losers were aborted, the winner's body is still readable
 */
export function hedge(options: HedgeOptions): HedgePolicy {
  const { delayMs, maxHedgedAttempts, clock } = validate(options);
  const hedges = new Emitter<HedgeEvent>();

  const execute = <T>(fn: PolicyFunction<T>, signal?: SignalInput): Promise<T> => {
    const context = toContext(signal);
    if (context.aborted) return Promise.reject(context.signal.reason);
    return new Promise<T>((resolve, reject) => {
      const attempts: AttemptContext[] = [];
      let running = 0;
      let settled = false;
      let timer: TimerHandle | undefined;
      let unfollowCaller: (() => void) | undefined;

      const finish = (abortReason: () => unknown): void => {
        settled = true;
        if (timer !== undefined) clock.clearTimeout(timer);
        unfollowCaller?.();
        for (const attempt of attempts) if (!attempt.ended) attempt.abort(abortReason());
      };

      const fail = (error: unknown, abortReason: () => unknown = lostReason): void => {
        finish(abortReason);
        reject(error);
      };

      const cancel = (): void => {
        const reason = context.signal.reason;
        fail(reason, () => reason);
      };

      const start = (): void => {
        const attempt = new AttemptContext(context);
        attempts.push(attempt);
        running++;
        let pending: PromiseLike<T> | T;
        try {
          pending = fn(attempt);
        } catch (error) {
          pending = Promise.reject(error);
        }
        // Every attempt's outcome is handled, so a loser's late rejection never surfaces as unhandled.
        Promise.resolve(pending).then(
          (value) => {
            attempt.settle();
            if (settled) return;
            finish(lostReason);
            resolve(value);
          },
          (error: unknown) => {
            attempt.settle();
            running--;
            if (settled) return;
            if (isControlSignal(error)) fail(error);
            else if (context.aborted) cancel();
            else if (running === 0) fail(error);
          },
        );
      };

      const onDelay = (): void => {
        timer = undefined;
        if (settled) return;
        if (context.aborted) {
          cancel();
          return;
        }
        if (unfollowCaller === undefined && context.signal !== NEVER_ABORTED_SIGNAL) {
          // From the first hedge on, several attempts run for one caller: follow its signal to end them all at once.
          const callerSignal = context.signal;
          const onAbort = () => {
            if (!settled) cancel();
          };
          callerSignal.addEventListener('abort', onAbort, { once: true });
          unfollowCaller = () => callerSignal.removeEventListener('abort', onAbort);
        }
        const attemptNumber = attempts.length + 1;
        if (hedges.hasListeners) hedges.emit({ attempt: attemptNumber, delayMs });
        if (attemptNumber <= maxHedgedAttempts) timer = clock.setTimeout(onDelay, delayMs);
        start();
      };

      if (maxHedgedAttempts > 0) timer = clock.setTimeout(onDelay, delayMs);
      start();
    });
  };

  return { execute, onHedge: hedges.event };
}

function lostReason(): DOMException {
  return new DOMException('hedged attempt aborted: another attempt settled the call', 'AbortError');
}

const FACTORY = 'hedge';

function validate(options: HedgeOptions): Required<HedgeOptions> {
  requireOptionsObject(options, FACTORY, '{ delayMs: 500 }');
  rejectUnknownOptions(options, ['delayMs', 'maxHedgedAttempts', 'clock'], FACTORY);
  return {
    // Armed as a timer: a longer delay would make Node fire it after 1 ms, hedging every call at once.
    delayMs: requireNonNegativeNumber(options.delayMs, 'delayMs', FACTORY, { maximum: MAX_DELAY_MS }),
    maxHedgedAttempts: requireNonNegativeInteger(
      options.maxHedgedAttempts ?? 1,
      'maxHedgedAttempts',
      FACTORY,
    ),
    clock: requireClock(options.clock ?? systemClock, FACTORY),
  };
}
