import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_PRICES, type PriceTable, priceOf, priceTable } from './prices.js';

describe('priceOf', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('looks a model up in a frozen table once: later calls (one per model call of a run) scan no keys', () => {
    const keys = vi.spyOn(Object, 'keys');
    const table = priceTable({ 'acme/known': { inputUsdPerMillion: 1, outputUsdPerMillion: 2 } });
    keys.mockClear();
    expect(priceOf(table, 'bench', 'no-price-here')).toBeUndefined();
    const scans = keys.mock.calls.length;
    for (let call = 0; call < 5; call++) expect(priceOf(table, 'bench', 'no-price-here')).toBeUndefined();
    expect(keys.mock.calls.length).toBe(scans);
    expect(priceOf(table, 'acme', 'known')?.outputUsdPerMillion).toBe(2);
    expect(priceOf(DEFAULT_PRICES, 'openai', 'gpt-4.1-mini-2025-04-14')).toBe(DEFAULT_PRICES['gpt-4.1-mini']);
    expect(priceOf(DEFAULT_PRICES, 'openai', 'gpt-4.1-mini-2025-04-14')).toBe(DEFAULT_PRICES['gpt-4.1-mini']);
  });

  it('reads a table that is not frozen afresh each time, so that a change to it is seen', () => {
    const table: Record<string, PriceTable[string]> = {};
    expect(priceOf(table, 'acme', 'later')).toBeUndefined();
    table.later = { inputUsdPerMillion: 3, outputUsdPerMillion: 4 };
    expect(priceOf(table, 'acme', 'later')?.inputUsdPerMillion).toBe(3);
  });
});
