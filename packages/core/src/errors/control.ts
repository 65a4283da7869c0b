import { hasBrand } from './safe-read.js';

/**
 * Control signals are not errors: cancellation, interrupts and a tool's request to stop or retry the run travel on
 * their own channel. Anything carrying this brand passes through every policy untouched: never retried, never
 * counted as a breaker failure, never replaced by a fallback.
 */
export const CONTROL_SIGNAL: unique symbol = Symbol.for('keel.control-signal') as never;

/** A value marked as a control signal. */
export interface ControlSignal {
  readonly [CONTROL_SIGNAL]: true;
}

/**
 * True when `value` is a control signal (a value branded with {@link CONTROL_SIGNAL}). Never throws: a value whose
 * brand cannot be read (a revoked proxy, a throwing getter) is not one.
 */
export function isControlSignal(value: unknown): value is ControlSignal {
  return hasBrand(value, CONTROL_SIGNAL);
}
