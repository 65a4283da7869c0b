import type { BreakerState, BreakerTransitionReason } from '@keel/core/store';

/** One transition as the breaker script reports it. */
export interface ScriptTransition {
  readonly gen: number;
  readonly from: BreakerState;
  readonly to: BreakerState;
  readonly reason: BreakerTransitionReason;
  readonly atMs: number;
  readonly openForMs?: number;
}

/**
 * The shared state after a script call, as the script answers it and publishes it (times in the script's clock).
 * `cause` is the serialised failure that opened the breaker, sent when it changed (and on sync and rejections).
 */
export interface BreakerUpdate {
  readonly now: number;
  readonly gen: number;
  readonly state: BreakerState;
  readonly openUntil: number;
  readonly opens: number;
  readonly probeSuccesses: number;
  readonly earliestProbe?: number;
  readonly probesUntil?: number;
  readonly transitions?: readonly ScriptTransition[];
  readonly cause?: string;
  /** A probe slot was freed without a transition: other processes may try for it. */
  readonly freed?: boolean;
  // Only in answers:
  readonly ticket?: { readonly kind: 'closed' } | { readonly kind: 'probe'; readonly probeId: number };
  readonly rejection?: { readonly state: 'open' | 'half-open' | 'isolated'; readonly remainingMs?: number };
  readonly lastReason?: BreakerTransitionReason | '';
  readonly lastAt?: number;
  /** A `renew` found the probe slot and extended its lease. */
  readonly renewed?: boolean;
}

/** Parses the script's JSON. Lua's JSON encoder writes an empty list as `{}`: lists are normalised here. */
export function parseBreakerUpdate(json: string): BreakerUpdate {
  const update = JSON.parse(json) as BreakerUpdate & { transitions?: unknown };
  if (update.transitions !== undefined && !Array.isArray(update.transitions)) {
    return { ...update, transitions: [] };
  }
  return update;
}
