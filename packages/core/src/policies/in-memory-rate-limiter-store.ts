import type { TimerHandle } from './clock.js';
import { NEVER_ABORTED_SIGNAL } from './context.js';
import { MAX_DELAY_MS } from './delays.js';
import type { PolicyContext } from './policy.js';
import type {
  RateLimiterGrant,
  RateLimiterStore,
  RateLimiterStoreFactory,
  RateLimiterStoreOptions,
} from './rate-limiter-store.js';

interface Waiter {
  resolve: (grant: true) => void;
  signal: AbortSignal;
  onAbort: () => void;
}

// Floating-point refills can land a hair below a whole token at the instant one is due.
const EPSILON = 1e-9;

/**
 * The default rate limiter store: a token bucket in this process. The refill is computed from `clock.now()` when a
 * call arrives, so no interval timer runs; waiting calls ('wait' mode) are served first come, first served by one
 * timer, and a waiter that aborts hands its turn to the next at once.
 *
 * @example
 *   rateLimiter({ ratePerSecond: 5, store: memoryRateLimiterStore });
 */
export const memoryRateLimiterStore: RateLimiterStoreFactory = (options) =>
  new InMemoryRateLimiterStore(options);

class InMemoryRateLimiterStore implements RateLimiterStore {
  private readonly queue = new Set<Waiter>();
  private tokenCount: number;
  private refilledAtMs: number;
  private timer: TimerHandle | undefined;

  constructor(private readonly options: RateLimiterStoreOptions) {
    this.tokenCount = options.bucketSize;
    this.refilledAtMs = options.clock.now();
  }

  get tokens(): number {
    this.refill();
    return this.tokenCount;
  }

  get queued(): number {
    return this.queue.size;
  }

  acquire(context: PolicyContext): RateLimiterGrant | Promise<RateLimiterGrant> {
    this.refill();
    if (this.queue.size === 0 && this.tokenCount + EPSILON >= 1) {
      this.tokenCount = Math.max(0, this.tokenCount - 1);
      return true;
    }
    if (this.options.mode === 'reject') return { kind: 'refused', retryAfterMs: this.msUntil(1) };
    // Everyone queued is served first, so this call needs one token more than the queue holds.
    const waitMs = this.msUntil(this.queue.size + 1);
    if (waitMs > this.options.maxWaitMs) return { kind: 'refused', retryAfterMs: waitMs };
    return this.wait(context);
  }

  /** Gives back the token of a waiter that was served but aborted before its call started. */
  release(): void {
    this.refill();
    this.tokenCount = Math.min(this.options.bucketSize, this.tokenCount + 1);
    if (this.queue.size === 0) return;
    // The next waiter need not wait for the refill the armed timer is set for.
    if (this.timer !== undefined) this.options.clock.clearTimeout(this.timer);
    this.serveQueue();
  }

  private refill(): void {
    const nowMs = this.options.clock.now();
    // A clock that steps backwards must not drain the bucket.
    if (nowMs > this.refilledAtMs) {
      this.tokenCount = Math.min(
        this.options.bucketSize,
        this.tokenCount + (nowMs - this.refilledAtMs) * this.options.ratePerMs,
      );
    }
    this.refilledAtMs = nowMs;
  }

  private msUntil(neededTokens: number): number {
    return Math.max(1, Math.ceil((neededTokens - this.tokenCount) / this.options.ratePerMs));
  }

  // A slow rate can put the next token further away than a timer can wait: wake at the limit and look again.
  private armQueueTimer(): void {
    this.timer = this.options.clock.setTimeout(this.serveQueue, Math.min(this.msUntil(1), MAX_DELAY_MS));
  }

  // One timer serves the whole queue, instead of a sleep per waiter with pre-computed turns: a waiter that aborts
  // hands its turn to the next one at once rather than leaving a hole in the schedule.
  private readonly serveQueue = (): void => {
    this.timer = undefined;
    this.refill();
    for (const waiter of this.queue) {
      if (this.tokenCount + EPSILON < 1) break;
      this.tokenCount = Math.max(0, this.tokenCount - 1);
      this.queue.delete(waiter);
      if (waiter.signal !== NEVER_ABORTED_SIGNAL) waiter.signal.removeEventListener('abort', waiter.onAbort);
      waiter.resolve(true);
    }
    if (this.queue.size > 0) this.armQueueTimer();
  };

  private wait(context: PolicyContext): Promise<RateLimiterGrant> {
    return new Promise<RateLimiterGrant>((resolve, rejectWait) => {
      const signal = context.signal;
      const waiter: Waiter = {
        resolve,
        signal,
        onAbort: () => {
          this.queue.delete(waiter);
          if (this.queue.size === 0 && this.timer !== undefined) {
            this.options.clock.clearTimeout(this.timer);
            this.timer = undefined;
          }
          rejectWait(signal.reason);
        },
      };
      this.queue.add(waiter);
      if (signal !== NEVER_ABORTED_SIGNAL) signal.addEventListener('abort', waiter.onAbort, { once: true });
      if (this.timer === undefined) this.armQueueTimer();
    });
  }
}
