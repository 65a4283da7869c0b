import type { KeelError } from '@keel/core';

/** Where a {@link RedisState} stands: connecting for the first time, answering, or unreachable. */
export type RedisStatus = 'connecting' | 'available' | 'unavailable' | 'closed';

/**
 * Redis stopped answering (a connection closed, a command failed, or a PING sent after an operation timed out got no
 * answer within `unavailableAfterMs`): from now on every policy follows its `onUnavailable` rule, until
 * {@link RedisRecoveredEvent}.
 */
export interface RedisUnavailableEvent {
  /** When it was noticed, in epoch milliseconds (the state's clock). */
  readonly atMs: number;
  /** `store.unavailable`, with what failed as its `cause`. */
  readonly error: KeelError;
}

/** Redis answers again and every policy has taken the shared state back (the first connection too, after a failed one). */
export interface RedisRecoveredEvent {
  /** When the shared state was taken back, in epoch milliseconds (the state's clock). */
  readonly atMs: number;
  /** How long Redis was unavailable, in milliseconds. */
  readonly unavailableForMs: number;
}
