import { KeelError } from '../errors/keel-error.js';
import type { Clock, TimerHandle } from '../policies/clock.js';

interface Timer {
  id: number;
  dueAtMs: number;
  callback: () => void;
}

// Node's limit: a longer delay (or NaN) makes `setTimeout` fire after 1 ms instead, with a warning.
const MAX_TIMER_DELAY_MS = 2_147_483_647;

/**
 * A clock for tests: time moves only when the test calls `advance`. Timers fire in due order (ties in the order they
 * were set), and pending promise callbacks run between them, so code awaiting a sleep continues as it would in real
 * time. Like Node's `setTimeout`, a delay above 2^31 - 1 ms or NaN fires after 1 ms, so that a test catches code
 * that arms such a timer; a negative delay fires at once.
 *
 * @example
 *   const clock = new FakeClock();
 *   const pending = retry({ clock }).execute(flaky);
 *   await clock.advance(1_000);
 */
export class FakeClock implements Clock {
  private currentMs: number;
  private nextId = 1;
  /** A binary min-heap on (dueAtMs, id); cleared timers stay in it until they surface, then are skipped. */
  private heap: Timer[] = [];
  /** The timers set and not yet fired or cleared. */
  private readonly live = new Map<number, Timer>();

  constructor(startMs = 1_700_000_000_000) {
    this.currentMs = startMs;
  }

  now(): number {
    return this.currentMs;
  }

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    const effectiveMs = Number.isNaN(delayMs) || delayMs > MAX_TIMER_DELAY_MS ? 1 : Math.max(0, delayMs);
    const timer: Timer = { id: this.nextId++, dueAtMs: this.currentMs + effectiveMs, callback };
    this.live.set(timer.id, timer);
    this.push(timer);
    return timer.id;
  }

  clearTimeout(handle: TimerHandle): void {
    if (typeof handle !== 'number' || !this.live.delete(handle)) return;
    // Cleared timers are skipped when they surface; rebuild once they outnumber the live ones, to bound memory.
    if (this.heap.length > 64 && this.heap.length > 2 * this.live.size) this.rebuild();
  }

  /** How many timers are waiting. A test can assert nothing was left behind. */
  get pendingTimers(): number {
    return this.live.size;
  }

  /**
   * Moves time forward by `ms`, firing every timer that falls due, in order. Throws `config.invalid` at once for a
   * negative, NaN or infinite `ms`: time never goes back, and "forever" is `runAll()`.
   */
  advance(ms: number): Promise<void> {
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
      throw new KeelError(
        'config.invalid',
        `FakeClock.advance: ms must be a finite number of milliseconds of at least 0, got ${String(ms)}`,
        { data: { option: 'ms' } },
      );
    }
    return this.advanceTo(this.currentMs + ms);
  }

  /** Fires every pending timer, however far away, then returns. Stops after `maxTimers` to avoid endless loops. */
  async runAll(maxTimers = 10_000): Promise<void> {
    for (let fired = 0; fired < maxTimers; fired++) {
      const next = this.peek();
      if (next === undefined) return;
      await this.advanceTo(Math.max(this.currentMs, next.dueAtMs));
    }
  }

  /**
   * Moves time forward `stepMs` at a time (firing what falls due, and letting I/O run between steps) until `promise`
   * settles, then returns what it resolves to or rejects with its error: the driver of a test whose code waits on
   * this clock, in place of a `while (!done) await clock.advance(10)` loop. `stepMs` defaults to 10; 0 fires only
   * what is due now and never moves time (for code that waits on real I/O and zero-delay timers). Rejects with
   * `internal.unexpected` once `maxMs` of fake time (defaults to 86_400_000, one day) has passed with `promise`
   * still pending, rather than looping for ever; with `stepMs` 0 only the test's timeout stops it.
   *
   * @example
   *   const result = await clock.runUntilSettled(assistant.run('go'));
   */
  async runUntilSettled<T>(
    promise: PromiseLike<T>,
    options: { stepMs?: number; maxMs?: number } = {},
  ): Promise<T> {
    const { stepMs = 10, maxMs = 86_400_000 } = options;
    for (const [option, value] of [
      ['stepMs', stepMs],
      ['maxMs', maxMs],
    ] as const) {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
        throw new KeelError(
          'config.invalid',
          `FakeClock.runUntilSettled: ${option} must be a finite number of milliseconds of at least 0, got ${String(value)}`,
          { data: { option } },
        );
      }
    }
    let settled = false;
    const watched = Promise.resolve(promise).finally(() => {
      settled = true;
    });
    // Handled below; this keeps a rejection from being reported as unhandled while time moves.
    watched.catch(() => undefined);
    const startMs = this.currentMs;
    while (!settled) {
      if (this.currentMs - startMs >= maxMs && stepMs > 0) {
        throw new KeelError(
          'internal.unexpected',
          `FakeClock.runUntilSettled: the promise was still pending after ${maxMs} ms of fake time`,
          { data: { maxMs } },
        );
      }
      await this.advance(stepMs);
    }
    return watched;
  }

  private async advanceTo(targetMs: number): Promise<void> {
    await flushMicrotasks();
    for (;;) {
      const due = this.peek();
      if (due === undefined || due.dueAtMs > targetMs) break;
      this.pop();
      this.live.delete(due.id);
      this.currentMs = Math.max(this.currentMs, due.dueAtMs);
      due.callback();
      await flushMicrotasks();
    }
    this.currentMs = targetMs;
    await flushMicrotasks();
  }

  /** The earliest live timer, dropping cleared ones found on top. */
  private peek(): Timer | undefined {
    while (this.heap.length > 0) {
      const top = this.heap[0]!;
      if (this.live.get(top.id) === top) return top;
      this.pop();
    }
    return undefined;
  }

  private push(timer: Timer): void {
    const heap = this.heap;
    heap.push(timer);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!earlier(timer, heap[parent]!)) break;
      heap[index] = heap[parent]!;
      index = parent;
    }
    heap[index] = timer;
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && earlier(heap[right]!, heap[left]!) ? right : left;
      if (!earlier(heap[child]!, last)) break;
      heap[index] = heap[child]!;
      index = child;
    }
    heap[index] = last;
  }

  private rebuild(): void {
    const timers = [...this.live.values()];
    this.heap = [];
    for (const timer of timers) this.push(timer);
  }
}

function earlier(left: Timer, right: Timer): boolean {
  return left.dueAtMs < right.dueAtMs || (left.dueAtMs === right.dueAtMs && left.id < right.id);
}

/** Lets every queued promise callback run (several rounds, since promise chains take a tick per step). */
export async function flushMicrotasks(rounds = 20): Promise<void> {
  for (let round = 0; round < rounds; round++) await Promise.resolve();
  await new Promise<void>((resolve) => setImmediate(resolve));
}
