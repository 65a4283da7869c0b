import type { StreamPart } from './stream-part.js';

/** Parts a stream holds for its reader before it merges deltas, by default. */
export const DEFAULT_HIGH_WATER_MARK = 1_000;

type DeltaPart = Extract<StreamPart, { type: 'text-delta' | 'reasoning-delta' | 'tool-call-delta' }>;

function isDelta(part: StreamPart<unknown>): part is DeltaPart {
  return part.type === 'text-delta' || part.type === 'reasoning-delta' || part.type === 'tool-call-delta';
}

function sameStream(left: DeltaPart, right: DeltaPart): boolean {
  if (left.type !== right.type || left.step !== right.step) return false;
  return left.type !== 'tool-call-delta' || (right.type === 'tool-call-delta' && left.index === right.index);
}

/**
 * The parts a stream holds between the run (which writes as the model streams) and the reader. While it
 * holds fewer than `highWaterMark` parts, every part is queued as it came. From the mark on, a delta (text, reasoning,
 * tool-call arguments) is merged into the newest queued delta of the same kind, step and call, looked for back over
 * the deltas at the queue's end: so a reader that falls behind gets fewer, longer deltas with the same text, and the
 * queue never holds more than the mark plus the run's other parts (a few per step and tool call, bounded by the run's
 * limits) and the text the run itself holds. A run whose reader is behind by the mark or more waits before its next
 * step until the reader has read down to half the mark ({@link PartQueue.belowMark}).
 */
export class PartQueue<Output> {
  private parts: StreamPart<Output>[] = [];
  private head = 0;
  private waiting: ((result: IteratorResult<StreamPart<Output>>) => void) | undefined;
  private failWaiting: ((error: unknown) => void) | undefined;
  private closed = false;
  private failure: { error: unknown } | undefined;
  private drained: { promise: Promise<void>; resolve: () => void } | undefined;

  constructor(private readonly highWaterMark: number) {}

  /** Parts queued and not yet read. */
  get size(): number {
    return this.parts.length - this.head;
  }

  push(part: StreamPart<Output>): void {
    if (this.closed) return;
    const waiting = this.waiting;
    if (waiting !== undefined) {
      this.waiting = undefined;
      this.failWaiting = undefined;
      waiting({ value: part, done: false });
      return;
    }
    if (this.size >= this.highWaterMark && isDelta(part) && this.merge(part)) return;
    this.parts.push(part);
  }

  /** Ends the queue: the reader gets what is queued, then the end (or `error`, when given). */
  close(error?: { error: unknown }): void {
    if (this.closed) return;
    this.closed = true;
    this.failure = error;
    const waiting = this.waiting;
    const failWaiting = this.failWaiting;
    this.waiting = undefined;
    this.failWaiting = undefined;
    if (error !== undefined) failWaiting?.(error.error);
    else waiting?.({ value: undefined, done: true });
  }

  /** Drops what is queued and ends the queue (the reader left). */
  discard(): void {
    this.parts = [];
    this.head = 0;
    this.close();
    this.release();
  }

  /**
   * While the queue holds `highWaterMark` parts or more: a promise that resolves once the reader has brought it down
   * to half the mark (or left). Otherwise undefined: nothing to wait for.
   */
  belowMark(): Promise<void> | undefined {
    if (this.size < this.highWaterMark || this.closed) return undefined;
    if (this.drained === undefined) {
      let resolve!: () => void;
      const promise = new Promise<void>((done) => {
        resolve = done;
      });
      this.drained = { promise, resolve };
    }
    return this.drained.promise;
  }

  private release(): void {
    const drained = this.drained;
    this.drained = undefined;
    drained?.resolve();
  }

  next(): Promise<IteratorResult<StreamPart<Output>>> {
    if (this.head < this.parts.length) {
      const part = this.parts[this.head]!;
      this.parts[this.head++] = undefined as never;
      if (this.head === this.parts.length) {
        this.parts = [];
        this.head = 0;
      } else if (this.head >= 1024 && this.head * 2 >= this.parts.length) {
        this.parts = this.parts.slice(this.head);
        this.head = 0;
      }
      if (this.drained !== undefined && this.size * 2 <= this.highWaterMark) this.release();
      return Promise.resolve({ value: part, done: false });
    }
    if (this.closed) {
      const failure = this.failure;
      this.failure = undefined;
      return failure === undefined
        ? Promise.resolve({ value: undefined, done: true })
        : Promise.reject(failure.error);
    }
    return new Promise((resolve, reject) => {
      this.waiting = resolve;
      this.failWaiting = reject;
    });
  }

  private merge(part: DeltaPart): boolean {
    for (let index = this.parts.length - 1; index >= this.head; index--) {
      const queued = this.parts[index]!;
      if (!isDelta(queued)) return false;
      if (sameStream(queued, part)) {
        this.parts[index] = { ...queued, delta: queued.delta + part.delta };
        return true;
      }
    }
    return false;
  }
}
