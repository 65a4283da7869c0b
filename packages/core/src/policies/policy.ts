import type { Clock } from './clock.js';

/** What a policy hands to the function it runs. */
export interface PolicyContext {
  /**
   * Aborted when the caller cancels or an enclosing policy gives up (a timeout, a hedge's losing attempt). It is
   * never aborted because the function settled, so what the function returned (a `fetch` Response whose body is
   * still to be read) stays usable after `execute` resolves. Reading it may create an AbortController lazily:
   * functions that never read it never pay for one.
   */
  readonly signal: AbortSignal;
  /** Whether `signal` is aborted. Reading this never creates a signal. */
  readonly aborted: boolean;
  /** 1 for the first call, 2 for the first retry, and so on. Set by `retry`; 1 elsewhere. */
  readonly attempt: number;
}

/** The function a policy runs. */
export type PolicyFunction<T> = (context: PolicyContext) => PromiseLike<T> | T;

/**
 * The one interface every resilience policy shares.
 *
 * A cancellation (the caller's `signal` aborting) ends `execute` with `signal.reason`, never retried, never counted
 * as a failure, never replaced by a fallback. So does any thrown value marked as a control signal.
 */
export interface Policy {
  /**
   * Runs `fn` under the policy. `signal` is the caller's AbortSignal, or the context a surrounding policy handed its
   * function (as `compose` does), so that no AbortController is created unless somebody reads a signal.
   */
  execute<T>(fn: PolicyFunction<T>, signal?: SignalInput): Promise<T>;
}

/** A caller's AbortSignal, a surrounding policy's context, or nothing. */
export type SignalInput = AbortSignal | PolicyContext | undefined;

/** A subscription to a policy's events; call `dispose` to stop listening. */
export interface Disposable {
  dispose(): void;
}

/** An event source: call it with a listener to subscribe. */
export type Event<T> = (listener: (event: T) => void) => Disposable;

/** Options shared by every policy that waits. */
export interface ClockOption {
  /** Where time comes from. Defaults to the system clock. */
  clock?: Clock;
}
