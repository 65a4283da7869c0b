import { describe, expect, it } from 'vitest';
import { FakeClock } from '../testing/fake-clock.js';
import { systemClock, type TimerHandle } from './clock.js';
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

  describe('with a clock whose timers can stop keeping the process alive', () => {
    /** A fake clock that records the timers it sets and whether each keeps the process alive. */
    class IdlingClock extends FakeClock {
      readonly set: TimerHandle[] = [];
      readonly alive = new Map<TimerHandle, boolean>();
      override setTimeout(callback: () => void, delayMs: number): TimerHandle {
        const handle = super.setTimeout(callback, delayMs);
        this.set.push(handle);
        this.alive.set(handle, true);
        return handle;
      }
      keepAlive(handle: TimerHandle, keepAlive: boolean): void {
        this.alive.set(handle, keepAlive);
      }
    }

    it('serves sequential entries with one timer, idle between them', async () => {
      const clock = new IdlingClock(0);
      const queue = new DeadlineQueue(clock);
      const expired: Array<[string, number]> = [];
      for (let call = 0; call < 5; call++) {
        const current = entry(`call ${call}`, clock, expired);
        queue.add(current, clock.now() + 1_000);
        expect(clock.alive.get(clock.set[0]!)).toBe(true);
        await clock.advance(10);
        queue.remove(current);
        // Idle from the next turn of the event loop, if nothing came in meanwhile.
        expect(clock.alive.get(clock.set[0]!)).toBe(true);
        await new Promise((resolve) => setImmediate(resolve));
        expect(clock.alive.get(clock.set[0]!)).toBe(false);
      }
      expect(clock.set).toHaveLength(1);
      // The idle timer fires once, at the first entry's deadline, finds nothing and is not armed again.
      await clock.advance(5_000);
      expect(expired).toEqual([]);
      expect(clock.pendingTimers).toBe(0);
    });

    it('fires early for a later entry and arms again for its deadline', async () => {
      const clock = new IdlingClock(0);
      const queue = new DeadlineQueue(clock);
      const expired: Array<[string, number]> = [];
      const first = entry('first', clock, expired);
      queue.add(first, 1_000);
      queue.remove(first);
      await clock.advance(500);
      queue.add(entry('second', clock, expired), 1_500);
      expect(clock.set).toHaveLength(1);
      await clock.advance(500);
      expect(expired).toEqual([]);
      expect(clock.set).toHaveLength(2);
      await clock.advance(500);
      expect(expired).toEqual([['second', 1_500]]);
      expect(clock.pendingTimers).toBe(0);
    });

    it('arms a new timer when an entry is due before the idle one fires', async () => {
      const clock = new IdlingClock(0);
      const queue = new DeadlineQueue(clock);
      const expired: Array<[string, number]> = [];
      const slow = entry('slow', clock, expired);
      queue.add(slow, 10_000);
      queue.remove(slow);
      queue.add(entry('quick', clock, expired), 100);
      expect(clock.set).toHaveLength(2);
      expect(clock.pendingTimers).toBe(1);
      await clock.advance(100);
      expect(expired).toEqual([['quick', 100]]);
    });
  });

  it('the system clock lets a timer stop, and start again, keeping the process alive', () => {
    const handle = systemClock.setTimeout(() => undefined, 60_000) as ReturnType<typeof setTimeout>;
    try {
      systemClock.keepAlive?.(handle, false);
      expect(handle.hasRef()).toBe(false);
      systemClock.keepAlive?.(handle, true);
      expect(handle.hasRef()).toBe(true);
    } finally {
      systemClock.clearTimeout(handle);
    }
  });
});
