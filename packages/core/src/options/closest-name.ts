// Names close to a misspelt one, for messages that suggest what was meant (an option, a tool).

/** The name in `candidates` closest to `name`, when close enough to be a slip (case ignored); else undefined. */
export function closestName(name: string, candidates: readonly string[]): string | undefined {
  const wanted = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const distance = editDistance(wanted, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  // A third of the length, at least 2 edits: catches typos and case/separator slips, not unrelated names.
  const threshold = Math.max(2, Math.floor(Math.max(name.length, best?.length ?? 0) / 3));
  return best !== undefined && bestDistance <= threshold ? best : undefined;
}

/** Levenshtein distance; inputs are tool names (at most 64 characters), so the quadratic table is cheap. */
export function editDistance(left: string, right: string): number {
  const a = left.slice(0, 256);
  const b = right.slice(0, 256);
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let row = 1; row <= a.length; row++) {
    const current = [row];
    for (let column = 1; column <= b.length; column++) {
      const substitution = previous[column - 1]! + (a[row - 1] === b[column - 1] ? 0 : 1);
      current.push(Math.min(previous[column]! + 1, current[column - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length]!;
}
