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
 * Deadlines served by one timer, kept in deadline order (ties in arrival order). When every entry waits the same time
 * (one timeout policy) entries arrive in deadline order, and adding and removing are O(1); an entry that arrives out
 * of order (a clock that stepped back) is inserted in place, walking back from the newest.
 *
 * The timer is armed no later than the earliest deadline: one armed earlier fires early, once, and re-arms. When the
 * queue empties the timer stays armed but stops keeping the process alive (`Clock.keepAlive`, on the next turn of the
 * event loop if the queue is still empty then), so that sequential calls reuse it instead of setting and clearing a
 * timer each; with a clock that cannot do that, it is cleared.
 * Either way nothing keeps the process alive once the last entry is gone.
 */
export class DeadlineQueue {
  private head: DeadlineEntry | undefined;
  private tail: DeadlineEntry | undefined;
  private timer: TimerHandle | undefined;
  /** When the armed timer fires. */
  private timerDueMs = 0;
  /** Whether the armed timer has been told not to keep the process alive (the queue is empty). */
  private idle = false;
  /** Whether an idle check waits for the next turn of the event loop. */
  private idleCheckPending = false;

  constructor(private readonly clock: Clock) {}

  add(entry: DeadlineEntry, dueAtMs: number): void {
    entry.dueAtMs = dueAtMs;
    entry.queued = true;
    let before = this.tail;
    while (before !== undefined && before.dueAtMs > dueAtMs) before = before.previous;
    entry.previous = before;
    entry.next = before === undefined ? this.head : before.next;
    if (before === undefined) this.head = entry;
    else before.next = entry;
    if (entry.next === undefined) this.tail = entry;
    else entry.next.previous = entry;
    if (this.timer === undefined) {
      this.arm();
    } else if (this.timerDueMs > this.head!.dueAtMs) {
      // A new earliest deadline: the armed timer would fire too late.
      this.clock.clearTimeout(this.timer);
      this.arm();
    } else if (this.idle) {
      this.idle = false;
      this.clock.keepAlive!(this.timer, true);
    }
  }

  remove(entry: DeadlineEntry): void {
    if (!entry.queued) return;
    this.unlink(entry);
    // The timer is left armed for an entry that went away while others wait: it fires early, once, and re-arms.
    if (this.head !== undefined || this.timer === undefined || this.idle) return;
    if (this.clock.keepAlive === undefined) {
      this.clock.clearTimeout(this.timer);
      this.timer = undefined;
    } else if (!this.idleCheckPending) {
      // Told on the next turn of the event loop, and only if still empty then: sequential calls that settle within
      // one turn do not toggle the timer's hold on the process call after call. Nothing exits before that turn.
      this.idleCheckPending = true;
      setImmediate(this.idleCheck);
    }
  }

  private readonly idleCheck = (): void => {
    this.idleCheckPending = false;
    if (this.head !== undefined || this.timer === undefined || this.idle) return;
    this.idle = true;
    this.clock.keepAlive!(this.timer, false);
  };

  private arm(): void {
    const head = this.head!;
    this.timerDueMs = head.dueAtMs;
    this.idle = false;
    this.timer = this.clock.setTimeout(this.fire, Math.max(0, head.dueAtMs - this.clock.now()));
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.idle = false;
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
