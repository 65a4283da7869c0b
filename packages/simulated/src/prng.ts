/**
 * mulberry32: a tiny, fast 32-bit PRNG. The same seed always yields the same sequence, which is all a fault
 * schedule needs (it is not cryptographic).
 *
 * @example
 *   const random = mulberry32(42);
 *   random(); // a number in [0, 1), the same one for every run seeded with 42
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * The random number in [0, 1) for position `index` of the stream seeded with `seed`. Drawn from a generator seeded
 * by (seed, index) rather than by stepping one shared generator, so the value at an index does not depend on how
 * many draws came before it (concurrent requests cannot shift each other's faults).
 */
export function randomAt(seed: number, index: number): number {
  return mulberry32((seed ^ Math.imul(index + 1, 0x9e3779b9)) >>> 0)();
}
