/**
 * A small seeded pseudo-random generator (mulberry32): the crash test draws its plans and kill moments from it, so
 * one seed gives one schedule. Not for anything that needs real randomness.
 */
export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max], both included. */
  integer(min: number, max: number): number;
}

/** A generator for `seed` (any 32-bit integer). */
export function seededRandom(seed: number): Random {
  let current = seed >>> 0;
  const next = (): number => {
    current = (current + 0x6d2b79f5) >>> 0;
    let value = current;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
  return {
    next,
    integer: (min, max) => min + Math.floor(next() * (max - min + 1)),
  };
}

/** A 32-bit seed from a string (FNV-1a), so that a run id alone fixes that run's plan. */
export function seedOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
