import { randomFillSync } from 'node:crypto';

/** Random bytes drawn ahead, ten an id (crypto.randomUUID keeps a pool the same way). */
const POOL_IDS = 256;
const pool = Buffer.alloc(POOL_IDS * 10);
let poolOffset = pool.length;

const HEX = Array.from({ length: 256 }, (_, value) => value.toString(16).padStart(2, '0'));

/** The millisecond of the last id and its 12-bit sequence: ids made in one millisecond keep their order. */
let lastMs = 0;
let sequence = 0;

/** Where ten fresh random bytes start in the pool. */
function drawRandom(): number {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const offset = poolOffset;
  poolOffset += 10;
  return offset;
}

/**
 * A new run id: a UUID of version 7 (RFC 9562), its creation time in milliseconds, a sequence that keeps the ids of
 * one process in the order they were made, then 62 random bits. An id made later sorts later, so the stores' indexes
 * keyed by run id grow at their end rather than at random places: fewer pages written and split a step (a 5-step
 * durable run on SQLite costs about a fifth less CPU than with random ids; `npm run bench:checkpoints`). The random
 * part keeps ids as hard to guess as a run id needs: they are not secrets, a store's reader sees them all.
 */
export function newRunId(): string {
  const offset = drawRandom();
  const nowMs = Date.now();
  if (nowMs > lastMs) {
    lastMs = nowMs;
    // A random start in the lower half leaves room for the ids of the same millisecond.
    sequence = ((pool[offset]! << 8) | pool[offset + 9]!) & 0x7ff;
  } else if (++sequence > 0xfff) {
    // More than the sequence holds in one millisecond (or the clock went back): the next millisecond.
    lastMs += 1;
    sequence = 0;
  }
  const time = lastMs;
  const high = Math.floor(time / 0x10000);
  const low = time % 0x10000;
  return (
    HEX[(high >>> 24) & 0xff]! +
    HEX[(high >>> 16) & 0xff]! +
    HEX[(high >>> 8) & 0xff]! +
    HEX[high & 0xff]! +
    '-' +
    HEX[low >>> 8]! +
    HEX[low & 0xff]! +
    '-' +
    HEX[0x70 | (sequence >>> 8)]! +
    HEX[sequence & 0xff]! +
    '-' +
    HEX[0x80 | (pool[offset + 1]! & 0x3f)]! +
    HEX[pool[offset + 2]!]! +
    '-' +
    HEX[pool[offset + 3]!]! +
    HEX[pool[offset + 4]!]! +
    HEX[pool[offset + 5]!]! +
    HEX[pool[offset + 6]!]! +
    HEX[pool[offset + 7]!]! +
    HEX[pool[offset + 8]!]!
  );
}
