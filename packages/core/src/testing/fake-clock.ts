import type { Clock, TimerHandle } from '../policies/clock.js';

interface Timer {
  id: number;
  dueAtMs: number;
  callback: () => void;
}

/**
 * A clock for tests: time moves only when the test calls `advance`. Timers fire in due order, and pending promise
 * callbacks run between them, so code awaiting a sleep continues as it would in real time.
 *
 * @example
 *   const clock = new FakeClock();
 *   const pending = retry({ clock }).execute(flaky);
 *   await clock.advance(1_000);
 */
export class FakeClock implements Clock {
  private currentMs: number;
  private nextId = 1;
  private timers: Timer[] = [];

  constructor(startMs = 1_700_000_000_000) {
    this.currentMs = startMs;
  }

  now(): number {
    return this.currentMs;
  }

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    const timer = { id: this.nextId++, dueAtMs: this.currentMs + Math.max(0, delayMs), callback };
    this.timers.push(timer);
    return timer.id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers = this.timers.filter((timer) => timer.id !== handle);
  }

  /** How many timers are waiting. A test can assert nothing was left behind. */
  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, firing every timer that falls due, in order. */
  async advance(ms: number): Promise<void> {
    const targetMs = this.currentMs + ms;
    await flushMicrotasks();
    for (;;) {
      const due = this.timers
        .filter((timer) => timer.dueAtMs <= targetMs)
        .sort((left, right) => left.dueAtMs - right.dueAtMs || left.id - right.id)[0];
      if (due === undefined) break;
      this.timers = this.timers.filter((timer) => timer !== due);
      this.currentMs = Math.max(this.currentMs, due.dueAtMs);
      due.callback();
      await flushMicrotasks();
    }
    this.currentMs = targetMs;
    await flushMicrotasks();
  }

  /** Fires every pending timer, however far away, then returns. Stops after `maxTimers` to avoid endless loops. */
  async runAll(maxTimers = 10_000): Promise<void> {
    for (let fired = 0; fired < maxTimers && this.timers.length > 0; fired++) {
      const next = [...this.timers].sort((left, right) => left.dueAtMs - right.dueAtMs || left.id - right.id)[0]!;
      await this.advance(next.dueAtMs - this.currentMs);
    }
  }
}

/** Lets every queued promise callback run (several rounds, since promise chains take a tick per step). */
export async function flushMicrotasks(rounds = 20): Promise<void> {
  for (let round = 0; round < rounds; round++) await Promise.resolve();
  await new Promise<void>((resolve) => setImmediate(resolve));
}
