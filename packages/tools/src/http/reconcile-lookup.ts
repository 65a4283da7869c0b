import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import {
  type Clock,
  type JsonValue,
  KeelError,
  type ReconcileContext,
  type ReconcileResult,
  type ToolContext,
} from '@keel/core';
import { optionError, rejectUnknownOptions } from '@keel/core/adapter';
import { checkPlaceholderNames } from '../template.js';
import type { AddressPolicy } from './address-policy.js';
import { exchange } from './exchange.js';
import { buildHeaders, type HeaderTemplates } from './request-headers.js';
import { decodeBody } from './response-body.js';
import { buildUrl, parseUrlTemplate } from './url-template.js';

/**
 * How an HTTP tool finds out whether an earlier call whose outcome is unknown took effect (its `reconcile` option):
 * a lookup request on the same origin rules, whose 2xx answer means it did (the answer is what the repeated call
 * returns to the model), and 404 that it did not.
 */
export interface HttpReconcileOptions {
  /**
   * An absolute http(s) URL template, as the tool's `url`: its placeholders name input properties, or
   * `{idempotencyKey}`, the key the earlier call was sent with (`'https://api.example.com/tickets?key={idempotencyKey}'`).
   * Required.
   */
  url: string;
  /** `GET` or `HEAD`. Defaults to `GET`. */
  method?: 'GET' | 'HEAD';
  /** Query parameters, each a template as in `url`. Defaults to none. */
  query?: Record<string, string>;
}

/** What the lookup shares with the tool's own requests. */
export interface LookupParts<Input> {
  readonly where: string;
  readonly toolName: string;
  readonly inputSchema: { readonly properties?: unknown };
  readonly headers: HeaderTemplates<Input>;
  readonly agents: { readonly http: HttpAgent; readonly https: HttpsAgent };
  readonly policy: AddressPolicy;
  readonly maxResponseBytes: number;
  readonly maxRedirects: number;
  readonly timeoutMs: number;
  readonly clock: Clock;
}

const KEY_PLACEHOLDER = 'idempotencyKey';

/** What a lookup that found the effect returns: the shape of an HTTP tool's output. */
export interface LookupOutput {
  status: number;
  contentType?: string;
  body: JsonValue;
  note?: string;
}

/**
 * The tool's `reconcile` from its `reconcile` option: sends the lookup with the tool's headers (its credentials),
 * through the same SSRF guard, bounded by the tool's timeout. 2xx: `{ happened: true, output }` with the output a call
 * returns (`{ status, contentType, body }`); 404: `{ happened: false }`; any other answer or a failure throws, and
 * the outcome stays unknown.
 */
export function reconcileLookup<Input>(
  options: unknown,
  parts: LookupParts<Input>,
): (input: Input, context: ReconcileContext) => Promise<ReconcileResult<LookupOutput>> {
  const where = `${parts.where} reconcile`;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw optionError({
      where: parts.where,
      option: 'reconcile',
      message: "reconcile must be an object such as { url: 'https://.../{idempotencyKey}' }",
    });
  }
  rejectUnknownOptions(options, ['url', 'method', 'query'], { where: where });
  const { url, method = 'GET', query } = options as HttpReconcileOptions;
  if (method !== 'GET' && method !== 'HEAD')
    throw optionError({
      where: parts.where,
      option: 'reconcile',
      message: 'reconcile.method must be GET or HEAD',
    });
  const template = parseUrlTemplate(url, query, where);
  checkPlaceholderNames(
    template.placeholders.filter((placeholder) => placeholder.name !== KEY_PLACEHOLDER),
    parts.inputSchema,
    where,
  );
  return async (input, { idempotencyKey, signal }) => {
    const target = buildUrl(template, { ...(input as object), [KEY_PLACEHOLDER]: idempotencyKey });
    const context: ToolContext = { signal, idempotencyKey, runId: '', step: 0, callIndex: 0, attempt: 1 };
    const headers = await buildHeaders(parts.headers, input, context);
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    const timer = parts.clock.setTimeout(
      () => controller.abort(new KeelError('tool.timeout', `no answer within ${parts.timeoutMs} ms`)),
      parts.timeoutMs,
    );
    try {
      const response = await exchange({
        method,
        url: target,
        headers,
        body: undefined,
        maxRedirects: parts.maxRedirects,
        maxResponseBytes: parts.maxResponseBytes,
        signal: controller.signal,
        agents: parts.agents,
        policy: parts.policy,
        toolName: parts.toolName,
      });
      if (response.status === 404) return { happened: false };
      if (response.status < 200 || response.status > 299) {
        throw new KeelError(
          'tool.failed',
          `${method} ${target.origin}${target.pathname} answered ${response.status}: the outcome stays unknown`,
          { provider: parts.toolName, data: { status: response.status } },
        );
      }
      const contentType = response.headers['content-type'];
      const decoded = decodeBody(response.body, contentType, response.truncated);
      const output: LookupOutput = { status: response.status, body: decoded.body };
      if (contentType !== undefined) output.contentType = contentType;
      if (decoded.note !== undefined) output.note = decoded.note;
      return { happened: true, output };
    } finally {
      parts.clock.clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
  };
}
