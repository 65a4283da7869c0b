import type { ErrorCode } from '../errors/codes.js';
import { isControlSignal } from '../errors/control.js';
import { KeelError } from '../errors/keel-error.js';
import type { Clock } from './clock.js';
import { type AbortFollowable, isAbortFollowable, NEVER_ABORTED_SIGNAL } from './context.js';
import type { DeadlineEntry, DeadlineQueue } from './deadline-queue.js';
import type { Emitter } from './events.js';
import type { PolicyContext } from './policy.js';
import {
  followSignal,
  type SignalFollower,
  type SignalFollowers,
  unfollowSignal,
} from './signal-followers.js';
import { returnController, takeController } from './signal-pool.js';
import type { TimeoutEvent, TimeoutStrategy } from './timeout.js';

/** What every call of one timeout policy shares. */
export interface TimeoutSettings {
  timeoutMs: number;
  strategy: TimeoutStrategy;
  code: ErrorCode;
  clock: Clock;
  timeouts: Emitter<TimeoutEvent>;
  /**
   * The deadlines of running calls, served by one timer: every call in forced mode, and in cooperative mode every
   * call whose function read its signal.
   */
  queue: DeadlineQueue;
}

/** The settle callbacks of a forced call's promise. */
interface ForcedOutcome {
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

/** One call's state, and the context its function receives. */
export class TimeoutCall implements PolicyContext, DeadlineEntry, SignalFollower {
  readonly startMs: number;
  private controller: AbortController | undefined;
  // The caller's signal's followers, while this call follows it through their shared listener.
  private parentFollowers: SignalFollowers | undefined;
  previousFollower: SignalFollower | undefined;
  nextFollower: SignalFollower | undefined;
  // The listener given to a parent that tells its abort itself (see AbortFollowable), instead of following its signal.
  private abortFollower: (() => void) | undefined;
  private timedOut = false;
  private released = false;
  private error: KeelError | undefined;
  forced: ForcedOutcome | undefined;
  previous: DeadlineEntry | undefined;
  next: DeadlineEntry | undefined;
  dueAtMs = 0;
  queued = false;

  constructor(
    private readonly settings: TimeoutSettings,
    private readonly parent: PolicyContext,
  ) {
    this.startMs = settings.clock.now();
  }

  get attempt(): number {
    return this.parent.attempt;
  }

  get aborted(): boolean {
    if (this.controller !== undefined) return this.controller.signal.aborted;
    if (this.parent.aborted) return true;
    // A call that has ended is aborted only if it was abandoned (timed out, cancelled): a settled call is not, and
    // a deadline passing after it settled is no timeout.
    if (this.released) return this.timedOut;
    // Without a signal nobody is told at the deadline, so the deadline is noticed here, when the function asks.
    if (!this.timedOut && this.pastDeadline()) this.markTimedOut();
    return this.timedOut;
  }

  get signal(): AbortSignal {
    if (this.controller !== undefined) return this.controller.signal;
    // Settled in time and never read: what is left of the call belongs to the caller, and so does its signal.
    if (this.released && !this.timedOut) return this.parent.signal;
    return this.createSignal();
  }

  get isReleased(): boolean {
    return this.released;
  }

  /**
   * Makes the signal on first read. A call that was abandoned (timed out, or its caller cancelled) hands out a signal
   * born aborted, with the reason of what ended it.
   */
  private createSignal(): AbortSignal {
    const controller = takeController();
    this.controller = controller;
    if (this.released && this.timedOut) {
      controller.abort(this.timeoutError());
      return controller.signal;
    }
    if (this.parent.aborted) {
      controller.abort(this.parent.signal.reason);
      return controller.signal;
    }
    const elapsedMs = this.settings.clock.now() - this.startMs;
    if (this.timedOut || elapsedMs >= this.settings.timeoutMs) {
      // First read after the deadline: the signal is born aborted, and this is when the timeout happens.
      this.markTimedOut();
      controller.abort(this.timeoutError());
      return controller.signal;
    }
    this.listenToParent();
    // A forced call is in the policy's deadline queue from its start; a cooperative one joins it now.
    if (!this.queued && this.settings.strategy === 'cooperative') {
      this.settings.queue.add(this, this.startMs + this.settings.timeoutMs);
    }
    return controller.signal;
  }

  /** Follows the caller's signal (once), and acts at once if it has already aborted. */
  listenToParent(): void {
    if (this.abortFollower !== undefined) return;
    if (this.parentFollowers === undefined && isAbortFollowable(this.parent)) {
      if (this.parent.aborted) {
        this.onParentAbort();
        return;
      }
      this.abortFollower = () => this.onParentAbort();
      this.parent.addAbortListener(this.abortFollower);
      return;
    }
    if (this.parentFollowers !== undefined) return;
    const parentSignal = this.parent.signal;
    if (parentSignal === NEVER_ABORTED_SIGNAL) return;
    // A lazy parent's signal can be born aborted, and a forced call may start listening after an abort it missed.
    if (parentSignal.aborted) {
      this.onParentAbort();
      return;
    }
    this.parentFollowers = followSignal(parentSignal, this);
  }

  /** The caller's signal aborted: abort this call's signal with its reason, and end a forced call at once. */
  onParentAbort(): void {
    const reason = this.parent.signal.reason;
    this.controller?.abort(reason);
    this.forced?.reject(reason);
    if (this.forced !== undefined) this.release();
  }

  /** Called at the deadline by the policy's deadline queue. */
  expire(): void {
    if (this.released) return;
    this.markTimedOut();
    const error = this.timeoutError();
    this.controller?.abort(error);
    if (this.forced !== undefined) {
      this.forced.reject(error);
      this.release();
    }
  }

  /** What the caller receives when the function fails with `error`. */
  failure(error: unknown): unknown {
    if (isControlSignal(error)) return error;
    if (this.parent.aborted) return this.parent.signal.reason;
    return this.timedOut ? this.timeoutError() : error;
  }

  /** Forced mode: the function settled (first settlement wins; later ones are ignored). */
  settle(fulfilled: boolean, outcome: unknown): void {
    if (this.released) return;
    const forced = this.forced!;
    if (fulfilled) {
      this.release();
      forced.resolve(outcome);
    } else {
      const reason = this.failure(outcome);
      this.release();
      forced.reject(reason);
    }
  }

  /**
   * Ends the call: drops the deadline-queue entry and the parent listener. The function's signal is not aborted
   * here: a timeout or a cancellation has already aborted it, and a call that settled in time leaves it alive for
   * what it returned (a `fetch` Response whose body is still to be read). Such a signal that nothing listens to any
   * more goes back to the pool for a later call (see `signal-pool.ts`); reading `signal` after that gives the
   * caller's. Idempotent.
   */
  release(): void {
    if (this.released) return;
    this.released = true;
    if (this.abortFollower !== undefined)
      (this.parent as AbortFollowable).removeAbortListener(this.abortFollower);
    if (this.queued) this.settings.queue.remove(this);
    if (this.parentFollowers !== undefined) unfollowSignal(this.parentFollowers, this);
    if (this.controller !== undefined && !this.timedOut && returnController(this.controller)) {
      this.controller = undefined;
    }
  }

  private pastDeadline(): boolean {
    return this.settings.clock.now() - this.startMs >= this.settings.timeoutMs;
  }

  /**
   * The one place a call times out, however the deadline was noticed (the deadline queue, or lazily when
   * the function reads `aborted` or `signal` late): every way tells `onTimeout` listeners, once.
   */
  private markTimedOut(): void {
    if (this.timedOut) return;
    this.timedOut = true;
    const { timeouts, timeoutMs, strategy } = this.settings;
    if (timeouts.hasListeners) timeouts.emit({ timeoutMs, strategy });
  }

  /** One error per call, so the signal's reason and the rejection are the same object. */
  private timeoutError(): KeelError {
    const { code, timeoutMs } = this.settings;
    this.error ??= new KeelError(code, `Timed out after ${timeoutMs} ms`, { data: { timeoutMs } });
    return this.error;
  }
}
