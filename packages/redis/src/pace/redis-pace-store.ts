import type { RateLimitSnapshot } from '@keel/core/http';
import type { PaceRequest, PaceStore } from '@keel/core/store';
import type { SharedConnection } from '../shared-connection.js';

/**
 * How long a waiting call keeps its place after the moment it was told to ask again, in milliseconds: the same as the
 * local governor's (`PACE_CLAIM_GRACE_MS` in @keel/core).
 */
const CLAIM_GRACE_MS = 1_000;

/**
 * The longest a call admitted counts as in flight, in milliseconds: 120_000 (2 minutes), the same as the local
 * governor's (`PACE_MAX_CALL_MS` in @keel/core). A call whose answer the store never hears (its process was killed
 * mid-call, its admit timed out on the client after Redis ran it, its `observe` failed) stops lowering what the fleet
 * thinks is left after this, rather than until the keys expire.
 */
const MAX_CALL_MS = 120_000;

/**
 * The pace governor's windows in Redis, shared by every process of a fleet (see `PaceStore` in `@keel/core/store` for
 * the rule): `admit`, `observe` and `refused` are one script call each (one round trip), on four keys per window,
 * `keel:<namespace>:pace:<provider/model/keyName>` (the window) and its `:claims`, `:served` and `:inflight`. Time is
 * the caller's `nowMs`. While Redis cannot be reached every operation rejects with `store.unavailable` at once, and the agent paces
 * the call with its own governor instead (a `pace-store-unavailable` event): pacing protects, it does not bound spend.
 */
export class RedisPaceStore implements PaceStore {
  constructor(private readonly connection: SharedConnection) {}

  async admit(request: PaceRequest): Promise<number> {
    const answer = await this.call(request.key, 'admit', request.nowMs, [
      String(request.tokens),
      request.callId,
      request.tenant,
      String(request.priority),
      String(CLAIM_GRACE_MS),
    ]);
    return Number(answer);
  }

  async observe(key: string, snapshot: RateLimitSnapshot | undefined, nowMs: number): Promise<void> {
    const text = (value: number | undefined) => (value === undefined ? '' : String(value));
    await this.call(key, 'observe', nowMs, [
      text(snapshot?.requestsRemaining),
      text(snapshot?.requestsResetInMs),
      text(snapshot?.requestsLimit),
      text(snapshot?.tokensRemaining),
      text(snapshot?.tokensResetInMs),
    ]);
  }

  async refused(key: string, retryAfterMs: number, nowMs: number): Promise<void> {
    await this.call(key, 'refused', nowMs, [String(retryAfterMs)]);
  }

  private call(key: string, operation: string, nowMs: number, args: string[]): Promise<unknown> {
    if (!this.connection.available) return Promise.reject(this.connection.unavailableError());
    const window = this.connection.key('pace', key);
    return this.connection.runKeys(
      'pace',
      [window, `${window}:claims`, `${window}:served`, `${window}:inflight`],
      [operation, String(nowMs), String(this.connection.ttlMs), String(MAX_CALL_MS), ...args],
    );
  }
}
