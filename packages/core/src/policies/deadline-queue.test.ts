import { describe, expect, it } from 'vitest';
import { FakeClock } from '../testing/fake-clock.js';
import { type DeadlineEntry, DeadlineQueue } from './deadline-queue.js';

/** An entry that records, in `expired`, its name and the time it expired. */
function entry(name: string, clock: FakeClock, expired: Array<[string, number]>): DeadlineEntry {
  return {
    dueAtMs: 0,
    previous: undefined,
    next: undefined,
    queued: false,
    expire: () => expired.push([name, clock.now()]),
  };
}

describe('DeadlineQueue', () => {
  it('expires entries added in deadline order at their deadlines, with one timer', async () => {
    const clock = new FakeClock(0);
    const queue = new DeadlineQueue(clock);
    const expired: Array<[string, number]> = [];
    queue.add(entry('a', clock, expired), 100);
    queue.add(entry('b', clock, expired), 100);
    queue.add(entry('c', clock, expired), 250);
    expect(clock.pendingTimers).toBe(1);
    await clock.advance(99);
    expect(expired).toEqual([]);
    await clock.advance(200);
    expect(expired).toEqual([
      ['a', 100],
      ['b', 100],
      ['c', 250],
    ]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('puts an entry added out of order (a clock that stepped back) in its place, re-arming for an earlier one', async () => {
    const clock = new FakeClock(0);
    const queue = new DeadlineQueue(clock);
    const expired: Array<[string, number]> = [];
    queue.add(entry('late', clock, expired), 300);
    queue.add(entry('middle', clock, expired), 200);
    queue.add(entry('early', clock, expired), 100);
    queue.add(entry('also middle', clock, expired), 200);
    expect(clock.pendingTimers).toBe(1);
    await clock.advance(100);
    expect(expired).toEqual([['early', 100]]);
    await clock.advance(300);
    expect(expired).toEqual([
      ['early', 100],
      ['middle', 200],
      ['also middle', 200],
      ['late', 300],
    ]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('clears its timer when the last entry is removed, and removing twice is harmless', async () => {
    const clock = new FakeClock(0);
    const queue = new DeadlineQueue(clock);
    const expired: Array<[string, number]> = [];
    const first = entry('first', clock, expired);
    const second = entry('second', clock, expired);
    const third = entry('third', clock, expired);
    queue.add(first, 100);
    queue.add(second, 200);
    queue.add(third, 300);
    queue.remove(second);
    queue.remove(second);
    expect(second.queued).toBe(false);
    await clock.advance(150);
    expect(expired).toEqual([['first', 100]]);
    queue.remove(third);
    expect(clock.pendingTimers).toBe(0);
    await clock.advance(1_000);
    expect(expired).toEqual([['first', 100]]);
  });

  it('keeps serving when an expiring entry adds another', async () => {
    const clock = new FakeClock(0);
    const queue = new DeadlineQueue(clock);
    const expired: Array<[string, number]> = [];
    const chained = entry('chained', clock, expired);
    const starter: DeadlineEntry = {
      ...entry('starter', clock, expired),
      expire: () => {
        expired.push(['starter', clock.now()]);
        queue.add(chained, clock.now() + 50);
      },
    };
    queue.add(starter, 100);
    await clock.advance(500);
    expect(expired).toEqual([
      ['starter', 100],
      ['chained', 150],
    ]);
    expect(clock.pendingTimers).toBe(0);
  });
});
