/**
 * The `fraction` percentile of `values` by nearest rank: the smallest value with at least that fraction of the values
 * at or below it (p50 of 1..10 is 5, p99 of 1..10 is 10). Undefined for no values.
 */
export function percentile(values: readonly number[], fraction: number): number | undefined {
  if (!(fraction > 0 && fraction <= 1)) throw new RangeError(`fraction must be in (0, 1], got ${fraction}`);
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.ceil(fraction * sorted.length) - 1];
}

/** `numerator / denominator`, or undefined when the denominator is 0. */
export function ratio(numerator: number, denominator: number): number | undefined {
  return denominator === 0 ? undefined : numerator / denominator;
}

/** Adds one to `counts[key]`. */
export function countInto(counts: Record<string, number>, key: string, amount = 1): void {
  counts[key] = (counts[key] ?? 0) + amount;
}
