import type { JsonValue } from '../../errors/keel-error.js';
import { optionError } from '../../options/option-error.js';
import {
  isJsonObject,
  rejectUnknownOptions,
  requireOptionsObject,
  requirePositiveInteger,
  requireRate,
} from '../validate.js';
import type { BreakerStrategy, BreakerWindow } from './strategy.js';

/** Options of {@link countWindow}. */
export interface CountWindowOptions {
  /** How many of the most recent counted calls the failure rate is taken over. Defaults to 20. */
  size?: number;
  /** The failure rate, in (0, 1], at or above which the breaker opens. Defaults to 0.5. */
  failureRateThreshold?: number;
  /**
   * Counted calls the window must hold before it may open, at most `size`. Defaults to `size`: the rate is always
   * taken over a full window, so a breaker that just closed cannot reopen on its first failures.
   */
  minimumCalls?: number;
}

const FACTORY = 'countWindow';

/**
 * Opens the breaker when at least `failureRateThreshold` of the last `size` counted calls failed, once the window
 * holds `minimumCalls` calls. Right for dependencies with steady traffic, where one failure in a row says little.
 *
 * @example
 *   circuitBreaker({ strategy: countWindow({ size: 50, failureRateThreshold: 0.25, minimumCalls: 20 }) });
 */
export function countWindow(options: CountWindowOptions = {}): BreakerStrategy {
  requireOptionsObject(options, FACTORY);
  rejectUnknownOptions(options, ['size', 'failureRateThreshold', 'minimumCalls'], FACTORY);
  const size = requirePositiveInteger(options.size ?? 20, 'size', FACTORY);
  const failureRateThreshold = requireRate(
    options.failureRateThreshold ?? 0.5,
    'failureRateThreshold',
    FACTORY,
  );
  const minimumCalls = requirePositiveInteger(options.minimumCalls ?? size, 'minimumCalls', FACTORY);
  if (minimumCalls > size) {
    throw optionError({
      where: FACTORY,
      option: 'minimumCalls',
      message: `minimumCalls (${minimumCalls}) cannot exceed size (${size}): the window never holds more calls`,
    });
  }
  return {
    kind: 'count-window',
    options: { size, failureRateThreshold, minimumCalls },
    createWindow: (_clock, saved) => new CountWindow(size, failureRateThreshold, minimumCalls, saved),
  };
}

class CountWindow implements BreakerWindow {
  /** A ring of the last `size` outcomes: 1 for a failure, 0 for a success. */
  private readonly outcomes: Uint8Array;
  private next = 0;
  private count = 0;
  private failures = 0;

  constructor(
    private readonly size: number,
    private readonly failureRateThreshold: number,
    private readonly minimumCalls: number,
    saved: JsonValue | undefined,
  ) {
    this.outcomes = new Uint8Array(size);
    if (isJsonObject(saved) && typeof saved.outcomes === 'string' && /^[sf]*$/.test(saved.outcomes)) {
      // Keep the newest outcomes when the window shrank between runs.
      for (const outcome of saved.outcomes.slice(-size)) this.push(outcome === 'f' ? 1 : 0);
    }
  }

  success(): void {
    this.push(0);
  }

  failure(): boolean {
    this.push(1);
    return this.count >= this.minimumCalls && this.failures >= this.failureRateThreshold * this.count;
  }

  reset(): void {
    this.outcomes.fill(0);
    this.next = 0;
    this.count = 0;
    this.failures = 0;
  }

  /** `{ outcomes: 'ssfs' }`, oldest first, `f` for a failure. */
  toJSON(): JsonValue {
    let outcomes = '';
    const start = this.count === this.size ? this.next : 0;
    for (let offset = 0; offset < this.count; offset++) {
      outcomes += this.outcomes[(start + offset) % this.size] === 1 ? 'f' : 's';
    }
    return { outcomes };
  }

  private push(outcome: 0 | 1): void {
    const index = this.next;
    if (this.count === this.size) this.failures -= this.outcomes[index]!;
    else this.count++;
    this.outcomes[index] = outcome;
    this.failures += outcome;
    this.next = index + 1 === this.size ? 0 : index + 1;
  }
}
