import type { RunEvent } from '@keel/core';

/** Where an event sits in a trace: the ids of the span it belongs to, in W3C hex form. */
export interface TraceIds {
  /** 32 lowercase hex characters. */
  readonly traceId: string;
  /** 16 lowercase hex characters. */
  readonly spanId: string;
  /** W3C trace flags (1: sampled). */
  readonly traceFlags: number;
}

/** Finds the span a run event belongs to; undefined when the event is not traced. */
export type TraceIdsOf = (event: RunEvent) => TraceIds | undefined;
