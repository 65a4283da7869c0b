import { describe, expect, it } from 'vitest';
import { newRunId } from './run-id.js';

const VERSION_7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The creation time an id carries (its first 48 bits). */
function timeOf(id: string): number {
  return Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

describe('newRunId', () => {
  it('makes UUIDs of version 7 with the RFC 9562 variant', () => {
    for (let index = 0; index < 1_000; index++) expect(newRunId()).toMatch(VERSION_7);
  });

  it('carries the time it was made, in milliseconds', () => {
    const before = Date.now();
    const id = newRunId();
    const after = Date.now();
    // The sequence may move an id into the next millisecond when one millisecond holds more than it can count.
    expect(timeOf(id)).toBeGreaterThanOrEqual(before);
    expect(timeOf(id)).toBeLessThanOrEqual(after + 1);
  });

  it('sorts the ids of a process in the order they were made, even many in one millisecond', () => {
    const ids = Array.from({ length: 20_000 }, () => newRunId());
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('keeps 62 random bits: ids made in the same millisecond differ beyond their sequence', () => {
    const tails = new Set(Array.from({ length: 1_000 }, () => newRunId().slice(19)));
    expect(tails.size).toBe(1_000);
  });
});
