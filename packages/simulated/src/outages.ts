import { optionError, rejectUnknownOptions } from '@keel/core/adapter';
import { type FaultKind, isFaultKind } from './faults.js';

/**
 * A stretch of wall time during which a model is down: every request for it that arrives inside the window gets
 * `fault`, whatever its schedule says. Times count from the server's epoch (`SimulatedServer.epochMs`).
 */
export interface OutageWindow {
  /** When the outage starts, in milliseconds after the epoch (inclusive). */
  startMs: number;
  /** When it ends, in milliseconds after the epoch (exclusive); must be after `startMs`. */
  endMs: number;
  /**
   * What a request inside the window gets: any fault kind but `none`, such as `unavailable` (a dead provider behind
   * its gateway), `rate_limit` (a 429 storm) or `hang`. Defaults to `unavailable`.
   */
  fault?: Exclude<FaultKind, 'none'>;
}

const WINDOW_KEYS = Object.keys({
  startMs: true,
  endMs: true,
  fault: true,
} satisfies Record<keyof OutageWindow, true>);

/** Checks outage windows and throws a `config.invalid` KeelError naming the bad one. */
export function validateOutages(outages: unknown, where: string): readonly OutageWindow[] {
  if (!Array.isArray(outages)) {
    throw optionError({
      where: 'outages',
      option: 'options',
      message: `${where} must be an array of windows such as [{ startMs: 500, endMs: 2500 }]`,
      prefixWhere: false,
    });
  }
  outages.forEach((window: unknown, index) => {
    const at = `${where}[${index}]`;
    if (typeof window !== 'object' || window === null || Array.isArray(window)) {
      throw optionError({
        where: 'outages',
        option: 'options',
        message: `${at} must be an object such as { startMs: 500, endMs: 2500 }`,
        prefixWhere: false,
      });
    }
    rejectUnknownOptions(window, WINDOW_KEYS, { where: at });
    const { startMs, endMs } = window as OutageWindow;
    const { fault } = window as { fault?: unknown };
    if (!(Number.isFinite(startMs) && startMs >= 0)) {
      throw optionError({
        where: 'outages',
        option: 'options',
        message: `${at}.startMs must be a number of milliseconds >= 0, got ${String(startMs)}`,
        prefixWhere: false,
      });
    }
    if (!(Number.isFinite(endMs) && endMs > startMs)) {
      throw optionError({
        where: 'outages',
        option: 'options',
        message: `${at}.endMs must be a number of milliseconds after startMs (${startMs}), got ${String(endMs)}`,
        prefixWhere: false,
      });
    }
    if (fault !== undefined && (!isFaultKind(fault) || fault === 'none')) {
      throw optionError({
        where: 'outages',
        option: 'options',
        message: `${at}.fault must be a fault kind other than none, got ${String(fault)}`,
        prefixWhere: false,
      });
    }
  });
  return outages as readonly OutageWindow[];
}

/** The fault of the window that `elapsedMs` (since the epoch) falls in, or undefined when the model is up. */
export function outageAt(
  outages: readonly OutageWindow[] | undefined,
  elapsedMs: number,
): Exclude<FaultKind, 'none'> | undefined {
  if (outages === undefined) return undefined;
  for (const window of outages) {
    if (elapsedMs >= window.startMs && elapsedMs < window.endMs) return window.fault ?? 'unavailable';
  }
  return undefined;
}
