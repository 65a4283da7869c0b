import type { Span } from '@opentelemetry/api';

/** Most ended spans held before they are handed to the SDK. */
export const MAX_HELD_SPANS = 64;
/** Longest an ended span is held, in milliseconds of the agent's clock (checked as run events come). */
export const MAX_HOLD_MS = 1_000;

/**
 * The ends of `chat` and `execute_tool` spans, handed to the SDK (`span.end(atMs)`, which runs its span processors)
 * together: at the end of a run, past {@link MAX_HELD_SPANS} spans, or once the oldest has waited
 * {@link MAX_HOLD_MS}. Each span keeps the end time of its event; only the moment the SDK is called moves, to where
 * its code and data are warm, rather than between a step's network waits. Held in parallel arrays that are reused.
 */
export class SpanEndBuffer {
  private readonly spans: Span[] = [];
  private readonly endsAtMs: number[] = [];

  /** Holds the end of `span` at `atMs` (ms since the epoch). */
  end(span: Span, atMs: number): void {
    this.spans.push(span);
    this.endsAtMs.push(atMs);
    if (this.spans.length >= MAX_HELD_SPANS) this.flush();
  }

  /** Ends the spans held when the oldest was ended {@link MAX_HOLD_MS} or more before `nowMs`. */
  flushIfDue(nowMs: number): void {
    const oldest = this.endsAtMs[0];
    if (oldest !== undefined && nowMs - oldest >= MAX_HOLD_MS) this.flush();
  }

  /** Ends every span held, in the order they ended. */
  flush(): void {
    const { spans, endsAtMs } = this;
    const count = spans.length;
    for (let index = 0; index < count; index++) (spans[index] as Span).end(endsAtMs[index]);
    spans.length = 0;
    endsAtMs.length = 0;
  }
}
