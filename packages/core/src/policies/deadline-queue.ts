import type { Clock, TimerHandle } from './clock.js';

/** Something waiting for a deadline; the queue links entries through their own fields, so adding allocates nothing. */
export interface DeadlineEntry {
  dueAtMs: number;
  previous: DeadlineEntry | undefined;
  next: DeadlineEntry | undefined;
  queued: boolean;
  /** Called once the deadline has passed, after the entry has left the queue. */
  expire(): void;
}

/**
 * Deadlines served by one timer, armed for the earliest entry. Entries must be added in deadline order, which holds
 * when every entry waits the same time (one timeout policy) on a clock that does not go back; then adding and
 * removing are O(1). The timer is cleared as soon as the queue empties, so nothing outlives the last entry.
 */
export class DeadlineQueue {
  private head: DeadlineEntry | undefined;
  private tail: DeadlineEntry | undefined;
  private timer: TimerHandle | undefined;

  constructor(private readonly clock: Clock) {}

  add(entry: DeadlineEntry, dueAtMs: number): void {
    entry.dueAtMs = dueAtMs;
    entry.previous = this.tail;
    entry.next = undefined;
    entry.queued = true;
    if (this.tail === undefined) this.head = entry;
    else this.tail.next = entry;
    this.tail = entry;
    if (this.timer === undefined) this.arm();
  }

  remove(entry: DeadlineEntry): void {
    if (!entry.queued) return;
    this.unlink(entry);
    // The timer is left armed for an entry that went away while others wait: it fires early, once, and re-arms.
    if (this.head === undefined && this.timer !== undefined) {
      this.clock.clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  /** Entries waiting now. */
  get size(): number {
    let count = 0;
    for (let entry = this.head; entry !== undefined; entry = entry.next) count++;
    return count;
  }

  private arm(): void {
    const head = this.head!;
    this.timer = this.clock.setTimeout(this.fire, Math.max(0, head.dueAtMs - this.clock.now()));
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    const nowMs = this.clock.now();
    while (this.head !== undefined && this.head.dueAtMs <= nowMs) {
      const entry = this.head;
      this.unlink(entry);
      entry.expire();
    }
    // An entry's expiry may have started a call that armed the timer already.
    if (this.head !== undefined && this.timer === undefined) this.arm();
  };

  private unlink(entry: DeadlineEntry): void {
    if (entry.previous === undefined) this.head = entry.next;
    else entry.previous.next = entry.next;
    if (entry.next === undefined) this.tail = entry.previous;
    else entry.next.previous = entry.previous;
    entry.previous = undefined;
    entry.next = undefined;
    entry.queued = false;
  }
}
