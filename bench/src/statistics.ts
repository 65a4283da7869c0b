/** The value below which `fraction` of the sorted samples fall. */
export function percentile(sortedSamples: readonly number[], fraction: number): number {
  if (sortedSamples.length === 0) return Number.NaN;
  const index = Math.min(sortedSamples.length - 1, Math.floor(fraction * sortedSamples.length));
  return sortedSamples[index]!;
}

/** Formats a duration in milliseconds with three decimals. */
export function formatMs(valueMs: number): string {
  return `${valueMs.toFixed(3)} ms`;
}
