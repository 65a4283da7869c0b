import type { JsonValue } from '../../errors/keel-error.js';
import {
  isCount,
  isJsonObject,
  rejectUnknownOptions,
  requireOptionsObject,
  requirePositiveInteger,
} from '../validate.js';
import type { BreakerStrategy, BreakerWindow } from './strategy.js';

/** Options of {@link consecutive}. */
export interface ConsecutiveOptions {
  /** Counted failures in a row that open the breaker. Defaults to 5. */
  threshold?: number;
  /**
   * Calls (successes and failures) the breaker must have seen since it last closed before it may open. Defaults to
   * `threshold`, which adds no condition; raise it so that a breaker that just closed is not reopened by the first
   * few failures.
   */
  minimumCalls?: number;
}

const FACTORY = 'consecutive';

/**
 * Opens the breaker after `threshold` counted failures in a row; any success starts the count again. The simplest
 * rule and the default: right for dependencies called a few times a minute, as agents call models and tools.
 *
 * @example
 *   circuitBreaker({ strategy: consecutive({ threshold: 5 }) });
 */
export function consecutive(options: ConsecutiveOptions = {}): BreakerStrategy {
  requireOptionsObject(options, FACTORY);
  rejectUnknownOptions(options, ['threshold', 'minimumCalls'], FACTORY);
  const threshold = requirePositiveInteger(options.threshold ?? 5, 'threshold', FACTORY);
  const minimumCalls = requirePositiveInteger(options.minimumCalls ?? threshold, 'minimumCalls', FACTORY);
  return {
    kind: 'consecutive',
    options: { threshold, minimumCalls },
    createWindow: (_clock, saved) => new ConsecutiveWindow(threshold, minimumCalls, saved),
  };
}

class ConsecutiveWindow implements BreakerWindow {
  private failures = 0;
  /** Calls seen since the last reset, saturating at `minimumCalls` (all that matters). */
  private calls = 0;

  constructor(
    private readonly threshold: number,
    private readonly minimumCalls: number,
    saved: JsonValue | undefined,
  ) {
    if (isJsonObject(saved)) {
      this.failures = clampCount(saved.failures, threshold);
      this.calls = Math.max(this.failures, clampCount(saved.calls, minimumCalls));
    }
  }

  success(): void {
    this.failures = 0;
    if (this.calls < this.minimumCalls) this.calls++;
  }

  failure(): boolean {
    this.failures++;
    if (this.calls < this.minimumCalls) this.calls++;
    return this.failures >= this.threshold && this.calls >= this.minimumCalls;
  }

  reset(): void {
    this.failures = 0;
    this.calls = 0;
  }

  toJSON(): JsonValue {
    return { failures: this.failures, calls: this.calls };
  }
}

/** A saved counter, or 0 when it is not a sane count. */
function clampCount(value: JsonValue | undefined, maximum: number): number {
  return isCount(value) ? Math.min(value, maximum) : 0;
}
