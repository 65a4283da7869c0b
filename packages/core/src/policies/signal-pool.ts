import { getEventListeners } from 'node:events';

/**
 * AbortControllers whose signals were handed to calls that settled in time and that nothing holds on to any more,
 * kept for the next call that reads its signal. On Node 20 making an AbortSignal costs microseconds (the signal's
 * prototype is swapped at birth), several times what the rest of a composed policy call costs; a signal nobody
 * listens to can be handed on instead.
 *
 * A signal is taken back only if it never aborted, has no `abort` listener (`fetch` keeps one for as long as its
 * request lives, a stream reader or `events.once` one while they wait) and no signal made from it with
 * `AbortSignal.any`. What is left is a signal that nothing will be told about: work that outlives its call and wants
 * to follow it must listen to it before the function returns, or better take the caller's signal (the documented
 * rule: a settled call's signal no longer follows the caller's).
 */
const pool: AbortController[] = [];

/** Most controllers kept: enough for the calls of a busy process that settle between two reads. */
export const SIGNAL_POOL_SIZE = 64;

// The own symbol under which Node keeps the signals made from this one with `AbortSignal.any` (found once, by
// looking): such a signal is never taken back, as something may still follow it through them.
let dependantsKey: symbol | null | undefined;

function findDependantsKey(): symbol | null {
  const source = new AbortController().signal;
  const before = new Set(Object.getOwnPropertySymbols(source));
  AbortSignal.any([source]);
  const added = Object.getOwnPropertySymbols(source).filter((key) => !before.has(key));
  return added[0] ?? null;
}

/** A controller for a call's signal: a returned one when the pool has one, else a new one. */
export function takeController(): AbortController {
  return pool.pop() ?? new AbortController();
}

/**
 * Offers back the controller of a call that settled in time. Returns whether it was taken: when it was, the call
 * must not hand its signal out again.
 */
export function returnController(controller: AbortController): boolean {
  if (pool.length >= SIGNAL_POOL_SIZE) return false;
  const signal = controller.signal;
  if (signal.aborted) return false;
  if (getEventListeners(signal, 'abort').length > 0) return false;
  if (dependantsKey === undefined) dependantsKey = findDependantsKey();
  // Without the key (another runtime), a signal that may have dependants cannot be told apart: keep none.
  if (dependantsKey === null) return false;
  if ((signal as unknown as Record<symbol, unknown>)[dependantsKey] !== undefined) return false;
  pool.push(controller);
  return true;
}
