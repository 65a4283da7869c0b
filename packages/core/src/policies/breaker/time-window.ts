import type { JsonValue } from '../../errors/keel-error.js';
import { optionError } from '../../options/option-error.js';
import type { Clock } from '../clock.js';
import {
  isCount,
  isJsonObject,
  rejectUnknownOptions,
  requireOptionsObject,
  requirePositiveInteger,
  requireRate,
} from '../validate.js';
import type { BreakerStrategy, BreakerWindow } from './strategy.js';

/** Options of {@link timeWindow}. */
export interface TimeWindowOptions {
  /** The span the failure rate is taken over, in milliseconds. Defaults to 60_000. */
  windowMs?: number;
  /** How many buckets the window is cut into; it slides one bucket at a time. Defaults to 10. */
  buckets?: number;
  /** The failure rate, in (0, 1], at or above which the breaker opens. Defaults to 0.5. */
  failureRateThreshold?: number;
  /** Counted calls the window must hold before it may open. Defaults to 10. */
  minimumCalls?: number;
}

const FACTORY = 'timeWindow';

/**
 * Opens the breaker when at least `failureRateThreshold` of the counted calls of the last `windowMs` failed, once
 * the window holds `minimumCalls` calls. Time is cut into `buckets` buckets, so the window covers between
 * `windowMs - windowMs / buckets` and `windowMs` of history. Reads the clock on every call (one `clock.now()`).
 *
 * @example
 *   circuitBreaker({ strategy: timeWindow({ windowMs: 30_000, failureRateThreshold: 0.5, minimumCalls: 20 }) });
 */
export function timeWindow(options: TimeWindowOptions = {}): BreakerStrategy {
  requireOptionsObject(options, FACTORY);
  rejectUnknownOptions(options, ['windowMs', 'buckets', 'failureRateThreshold', 'minimumCalls'], FACTORY);
  const buckets = requirePositiveInteger(options.buckets ?? 10, 'buckets', FACTORY);
  // At least 1 ms per bucket, so that a bucket is never shorter than the clock's resolution.
  const windowMs = requirePositiveInteger(options.windowMs ?? 60_000, 'windowMs', FACTORY);
  if (windowMs < buckets) {
    throw optionError({
      where: FACTORY,
      option: 'windowMs',
      message: `windowMs must be at least buckets (${buckets}), got ${windowMs}`,
    });
  }
  const failureRateThreshold = requireRate(
    options.failureRateThreshold ?? 0.5,
    'failureRateThreshold',
    FACTORY,
  );
  const minimumCalls = requirePositiveInteger(options.minimumCalls ?? 10, 'minimumCalls', FACTORY);
  return {
    kind: 'time-window',
    options: { windowMs, buckets, failureRateThreshold, minimumCalls },
    createWindow: (clock, saved) =>
      new TimeWindow(clock, windowMs / buckets, buckets, failureRateThreshold, minimumCalls, saved),
  };
}

class TimeWindow implements BreakerWindow {
  /** Which bucket (`floor(now / bucketMs)`) each slot holds, -Infinity when empty. Slot = bucket % buckets. */
  private readonly ids: Float64Array;
  private readonly successes: Uint32Array;
  private readonly failures: Uint32Array;

  constructor(
    private readonly clock: Clock,
    private readonly bucketMs: number,
    private readonly buckets: number,
    private readonly failureRateThreshold: number,
    private readonly minimumCalls: number,
    saved: JsonValue | undefined,
  ) {
    this.ids = new Float64Array(buckets).fill(Number.NEGATIVE_INFINITY);
    this.successes = new Uint32Array(buckets);
    this.failures = new Uint32Array(buckets);
    this.restore(saved);
  }

  success(): void {
    this.successes[this.slotNow()]!++;
  }

  failure(): boolean {
    const current = Math.floor(this.clock.now() / this.bucketMs);
    this.failures[this.slot(current)]!++;
    let calls = 0;
    let failures = 0;
    for (let slot = 0; slot < this.buckets; slot++) {
      if (this.ids[slot]! > current - this.buckets) {
        calls += this.successes[slot]! + this.failures[slot]!;
        failures += this.failures[slot]!;
      }
    }
    return calls >= this.minimumCalls && failures >= this.failureRateThreshold * calls;
  }

  reset(): void {
    this.ids.fill(Number.NEGATIVE_INFINITY);
    this.successes.fill(0);
    this.failures.fill(0);
  }

  /** `{ bucketMs, buckets: [[bucket, successes, failures], ...] }`, only buckets still inside the window. */
  toJSON(): JsonValue {
    const current = Math.floor(this.clock.now() / this.bucketMs);
    const buckets: JsonValue[] = [];
    for (let slot = 0; slot < this.buckets; slot++) {
      const id = this.ids[slot]!;
      if (id > current - this.buckets) buckets.push([id, this.successes[slot]!, this.failures[slot]!]);
    }
    buckets.sort((left, right) => (left as number[])[0]! - (right as number[])[0]!);
    return { bucketMs: this.bucketMs, buckets };
  }

  private slotNow(): number {
    return this.slot(Math.floor(this.clock.now() / this.bucketMs));
  }

  /** The slot of bucket `id`, emptied first when it still holds an older bucket. */
  private slot(id: number): number {
    const slot = id % this.buckets;
    if (this.ids[slot] !== id) {
      this.ids[slot] = id;
      this.successes[slot] = 0;
      this.failures[slot] = 0;
    }
    return slot;
  }

  private restore(saved: JsonValue | undefined): void {
    // Buckets of another width would mean other spans of time: start empty rather than guess.
    if (!isJsonObject(saved) || saved.bucketMs !== this.bucketMs || !Array.isArray(saved.buckets)) return;
    for (const bucket of saved.buckets) {
      if (!Array.isArray(bucket) || bucket.length !== 3 || !bucket.every(isCount)) {
        this.reset();
        return;
      }
      const [id, successes, failures] = bucket as [number, number, number];
      const slot = this.slot(id);
      this.successes[slot] = successes;
      this.failures[slot] = failures;
    }
  }
}
