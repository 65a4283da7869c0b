import { describe, expect, it } from 'vitest';
import { openPeriodMs } from './breaker-store.js';

describe('openPeriodMs', () => {
  it('grows by factor per open in a row, up to maxMs', () => {
    const duration = { initialMs: 1_000, factor: 2, maxMs: 10_000 };
    expect([1, 2, 3, 4, 5].map((opens) => openPeriodMs(duration, opens))).toEqual([
      1_000, 2_000, 4_000, 8_000, 10_000,
    ]);
  });

  it('stays finite however many opens in a row, from any start', () => {
    for (const opens of [1_024, 1_025, 5_000, 1e9, Number.MAX_SAFE_INTEGER]) {
      expect(openPeriodMs({ initialMs: 0, factor: 2, maxMs: 300_000 }, opens)).toBe(0);
      expect(openPeriodMs({ initialMs: 10, factor: 2, maxMs: 300_000 }, opens)).toBe(300_000);
      expect(openPeriodMs({ initialMs: 10, factor: 1, maxMs: 10 }, opens)).toBe(10);
    }
  });
});
