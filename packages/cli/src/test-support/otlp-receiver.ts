// What an OTLP/HTTP receiver of the tests (a real HTTP server on 127.0.0.1) was sent, decoded from OTLP's JSON
// encoding. A test fixture compiled with the package, not part of its API.
import type { HttpTestServer } from '@keel/core/testing';

/** An attribute of a span, as OTLP/JSON encodes it. */
export interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: number | string; boolValue?: boolean; arrayValue?: unknown };
}

/** A span, as OTLP/JSON encodes it (the fields the tests read). */
export interface OtlpSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  links?: { traceId: string; spanId: string }[];
  attributes: OtlpAttribute[];
  events?: { name: string; attributes: OtlpAttribute[] }[];
}

/** Every span the receiver was sent (`/v1/traces`), in the order received. */
export function spansOf(receiver: HttpTestServer): OtlpSpan[] {
  return receiver.requests
    .filter((request) => request.url === '/v1/traces')
    .flatMap((request) =>
      (request.json() as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] }).resourceSpans.flatMap(
        (resource) => resource.scopeSpans.flatMap((scope) => scope.spans),
      ),
    );
}

/** The name of every metric the receiver was sent (`/v1/metrics`), once per export. */
export function metricNamesOf(receiver: HttpTestServer): string[] {
  return receiver.requests
    .filter((request) => request.url === '/v1/metrics')
    .flatMap((request) =>
      (
        request.json() as { resourceMetrics: { scopeMetrics: { metrics: { name: string }[] }[] }[] }
      ).resourceMetrics.flatMap((resource) =>
        resource.scopeMetrics.flatMap((scope) => scope.metrics.map((metric) => metric.name)),
      ),
    );
}

/** Attributes as a plain object: strings, booleans and numbers as they are, arrays in OTLP's encoding. */
export function attributesOf(attributes: readonly OtlpAttribute[]): Record<string, unknown> {
  return Object.fromEntries(
    attributes.map((entry) => [
      entry.key,
      entry.value.stringValue ??
        entry.value.boolValue ??
        (entry.value.intValue === undefined ? entry.value.arrayValue : Number(entry.value.intValue)),
    ]),
  );
}
