import type { TraceIds } from '@keel/telemetry';
import type { SpanContext } from '@opentelemetry/api';

/**
 * The W3C `traceparent` header of a span context (`00-<trace id>-<span id>-<flags>`), built directly rather than
 * through the global propagator, which is a no-op until an SDK registers one.
 */
export function traceparentOf(spanContext: SpanContext): string {
  return `00-${spanContext.traceId}-${spanContext.spanId}-${(spanContext.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** W3C trace-context headers of a span context: `traceparent`, and `tracestate` when it has one. */
export function traceHeadersOf(spanContext: SpanContext): Record<string, string> {
  const headers: Record<string, string> = { traceparent: traceparentOf(spanContext) };
  const state = spanContext.traceState?.serialize();
  if (state !== undefined && state !== '') headers.tracestate = state;
  return headers;
}

/** A `traceparent` value read back into a span context (remote), or undefined when it is malformed. */
export function parseTraceparent(value: string): SpanContext | undefined {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(value.trim());
  if (match === null || /^0+$/.test(match[1]!) || /^0+$/.test(match[2]!)) return undefined;
  return {
    traceId: match[1]!,
    spanId: match[2]!,
    traceFlags: Number.parseInt(match[3]!, 16),
    isRemote: true,
  };
}

/** The ids of a span context in the form logs carry them. */
export function traceIdsOf(spanContext: SpanContext): TraceIds {
  return { traceId: spanContext.traceId, spanId: spanContext.spanId, traceFlags: spanContext.traceFlags };
}
