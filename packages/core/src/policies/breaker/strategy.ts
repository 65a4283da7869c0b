import type { JsonValue } from '../../errors/keel-error.js';
import type { Clock } from '../clock.js';

/**
 * The counting state of one breaker while it is closed: it sees every counted outcome and says when to open.
 * Windows are mutable for speed; a store owns one and serialises it with `toJSON`.
 */
export interface BreakerWindow {
  /** Records a success. Called on the hot path: must not allocate. */
  success(): void;
  /** Records a failure; returns true when the breaker should open. */
  failure(): boolean;
  /** Forgets every outcome (the breaker closed again or was reset). */
  reset(): void;
  /** The window as JSON, restorable by the strategy's `createWindow`. */
  toJSON(): JsonValue;
}

/**
 * When a closed breaker opens: a swappable value such as `consecutive({ threshold: 5 })`. The strategy itself holds
 * no state; each breaker gets its own window from `createWindow`.
 */
export interface BreakerStrategy {
  /** Names the rule, such as `consecutive`; stored in snapshots so a window is only restored by the same rule. */
  readonly kind: string;
  /** The rule's options as JSON, so that a shared store can run the same rule elsewhere (a Lua script, say). */
  readonly options: Readonly<Record<string, JsonValue>>;
  /**
   * A new window. `saved` is a previous window's `toJSON()`; a window that does not fit (another size, say) is
   * adapted or dropped, never an error, since options may change between runs.
   */
  createWindow(clock: Clock, saved?: JsonValue): BreakerWindow;
}
