import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import {
  type Clock,
  type JsonSchemaInput,
  type JsonValue,
  KeelError,
  type SchemaLike,
  systemClock,
  type Tool,
  type ToolContext,
  type ToolFallback,
  tool,
} from '@keel/core';
import {
  MAX_TIMER_MS,
  optionError,
  rejectUnknownOptions,
  requireBoolean,
  requireClock,
  requireInteger,
  requireOptionsObject,
  secretValueRedactor,
} from '@keel/core/adapter';
import { checkPlaceholderNames } from '../template.js';
import { addressPolicy } from './address-policy.js';
import { compileBody } from './body-template.js';
import { exchange } from './exchange.js';
import { guardedLookup, type HostResolver, systemResolver } from './guarded-lookup.js';
import { type HttpReconcileOptions, reconcileLookup } from './reconcile-lookup.js';
import {
  buildHeaders,
  HEADER_NAME,
  type HeadersHook,
  headerTemplates,
  secretHeaderValues,
} from './request-headers.js';
import { type DecodedBody, decodeBody } from './response-body.js';
import { statusError } from './status-error.js';
import { buildUrl, parseUrlTemplate } from './url-template.js';

/** The methods an HTTP tool may use. */
export type HttpMethod = 'GET' | 'HEAD' | 'OPTIONS' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

const METHODS: readonly HttpMethod[] = ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE'];
const SAFE_METHODS: readonly HttpMethod[] = ['GET', 'HEAD', 'OPTIONS'];

/** Options of {@link httpTool}. */
export interface HttpToolOptions<Input> {
  /** Sent to the model; 1 to 64 letters, digits, `_` or `-`. Required. */
  name: string;
  /** Tells the model what the endpoint does. Required. */
  description: string;
  /** The input's schema (zod 4 or JSON Schema, top level an object); placeholders name its properties. Required. */
  input: SchemaLike<Input>;
  /** The JSON Schema sent to the model, when `input` is a library schema that cannot produce one. Defaults to derived. */
  inputJsonSchema?: JsonSchemaInput;
  /** Defaults to `'GET'`. */
  method?: HttpMethod;
  /**
   * An absolute http(s) URL whose path and query may hold `{name}` placeholders:
   * `'https://api.example.com/items/{id}'`. Values are percent-encoded, so none can add a path segment or a
   * parameter; the scheme, host and port are fixed. Required.
   */
  url: string;
  /** Query parameters, each a template (`{ q: '{query}', limit: '20' }`); one without a value is left out. Defaults to none. */
  query?: Record<string, string>;
  /**
   * Request headers: a record whose values may hold placeholders (a header whose placeholder has no value is left
   * out; a value with a line break is refused), or a
   * function of the input and the call's context (where trace headers such as `traceparent` can be added).
   * Defaults to none; `accept` and `user-agent` have defaults of their own.
   */
  headers?: Record<string, string> | HeadersHook<Input>;
  /**
   * The JSON body: a template (strings that are exactly `'{name}'` become the input's value with its type, other
   * strings are filled as text), or a function of the input. Not allowed with GET, HEAD or OPTIONS. Defaults to none.
   */
  body?: unknown;
  /** Longest the whole exchange may take, redirects and body included, in milliseconds. Defaults to 30_000. */
  timeoutMs?: number;
  /** Most bytes of a response body read; a longer body is cut there and the result says so. Defaults to 1_048_576. */
  maxResponseBytes?: number;
  /** Most redirects followed, each checked like the first request. Defaults to 5. */
  maxRedirects?: number;
  /**
   * Internal targets this tool may reach despite the SSRF guard: host names (`'api.internal'`, `'*.corp.example'`:
   * trusted whatever they resolve to) and CIDR ranges (`'10.1.0.0/16'`, `'127.0.0.1'`, `'::1'`). Defaults to none:
   * loopback, private, link-local, metadata and other non-public addresses are refused.
   */
  allow?: readonly string[];
  /** Resolves host names to addresses. Defaults to the system resolver (`dns.lookup`, all addresses). */
  resolveHost?: HostResolver;
  /**
   * Whether the call may be repeated harmlessly (then a 429, 5xx or timeout is retried by the agent). Defaults to
   * true for GET, HEAD and OPTIONS, false otherwise (PUT and DELETE are idempotent by HTTP's definition: say so here
   * when the API honours it).
   */
  idempotent?: boolean;
  /**
   * The header carrying the call's idempotency key (stable across retries and resumes) on methods other than GET,
   * HEAD and OPTIONS, for APIs that deduplicate; false to send none. Defaults to `'Idempotency-Key'`.
   */
  idempotencyHeader?: string | false;
  /** Whether a human must approve each call (or a function deciding per input). Defaults to false. */
  needsApproval?: boolean | ((input: Input) => boolean | Promise<boolean>);
  /** What answers when a call fails: another tool or a degraded value (see core's `tool()`). Defaults to none. */
  fallbacks?: readonly ToolFallback<Input>[];
  /** Where the timeout gets time from, and the time Retry-After dates are read against. Defaults to the system clock. */
  clock?: Clock;
  /**
   * How to find out whether an earlier call whose outcome is unknown (it timed out, or its connection dropped, after
   * the request was sent) took effect, before the model's repeat of it runs: a lookup URL template whose placeholders
   * name input properties or `{idempotencyKey}` (the key the earlier call sent in `idempotencyHeader`). A 2xx answer
   * means it did (the repeat returns that answer), 404 that it did not (the repeat runs); anything else leaves the
   * outcome unknown. Sent with the tool's headers, through the same SSRF guard and timeout. Defaults to none.
   *
   * @example
   *   reconcile: { url: 'https://tracker.example.com/api/issues?idempotency_key={idempotencyKey}' }
   */
  reconcile?: HttpReconcileOptions;
}

/** What a successful call returns to the model. */
export interface HttpOutput {
  status: number;
  contentType?: string;
  /** Parsed JSON for a JSON response, text for a textual one, null for a binary one or an empty body. */
  body: JsonValue;
  /** Present when the body was cut or could not be shown as it is. */
  note?: string;
}

const OPTION_NAMES = [
  'name',
  'description',
  'input',
  'inputJsonSchema',
  'method',
  'url',
  'query',
  'headers',
  'body',
  'timeoutMs',
  'maxResponseBytes',
  'maxRedirects',
  'allow',
  'resolveHost',
  'idempotent',
  'idempotencyHeader',
  'needsApproval',
  'fallbacks',
  'clock',
  'reconcile',
] as const;

/**
 * A tool that calls one HTTP endpoint with a URL, query, headers and JSON body filled from the validated input.
 * Responses are classified like a model provider's: 2xx (and other statuses below 400) are the result; 4xx and 5xx
 * are KeelErrors the model sees as data, with the body as `data.body`; 429, 5xx and timeouts are retryable, so the
 * agent retries an idempotent tool, honouring Retry-After. An SSRF guard is on by default: every connection,
 * redirects included, goes only to public addresses, checked on the very address the socket connects to, unless
 * `allow` says otherwise. A redirect to another origin carries only `accept`, `accept-language`, `content-language`,
 * `content-type` and `user-agent`. The values of the other headers this tool sends (but those filled from the input
 * and the idempotency key) are removed from its results and errors, as an endpoint may echo them back. Requests go
 * through `node:http`/`node:https` with agents of this tool's own (so no connection opened under another tool's
 * allowlist is ever reused here); proxies are not used.
 *
 * The tool's `timeoutMs` (the agent's backstop) is this timeout plus one second, so that the exchange's own timeout,
 * which names the endpoint, fires first.
 *
 * @example
 *   const getIssue = httpTool({
 *     name: 'get_issue',
 *     description: 'Reads an issue of the tracker',
 *     input: z.object({ id: z.number().int() }),
 *     url: 'https://tracker.example.com/api/issues/{id}',
 *     headers: { authorization: `Bearer ${token}` },
 *   });
 */
export function httpTool<Input = unknown>(options: HttpToolOptions<Input>): Tool<Input, HttpOutput> {
  requireOptionsObject(options, {
    where: 'httpTool',
    example: "{ name, description, input, url: 'https://api.example.com/items/{id}' }",
  });
  rejectUnknownOptions(options, OPTION_NAMES, { where: 'httpTool' });
  const where = `httpTool "${String(options.name)}"`;
  const method = options.method ?? 'GET';
  if (!METHODS.includes(method))
    throw optionError({
      where: where,
      option: 'method',
      message: `method must be one of ${METHODS.join(', ')}`,
    });
  const safe = SAFE_METHODS.includes(method);
  const template = parseUrlTemplate(options.url, options.query, where);
  const headers = headerTemplates(options.headers, where);
  if (options.body !== undefined && safe)
    throw optionError({ where: where, option: 'body', message: `a ${method} request cannot have a body` });
  const body = options.body === undefined ? undefined : compileBody(options.body, where);
  const timeoutMs = requireInteger(options.timeoutMs, {
    where: where,
    option: 'timeoutMs',
    min: 1,
    max: MAX_TIMER_MS,
    default: 30_000,
  });
  const maxResponseBytes = requireInteger(options.maxResponseBytes, {
    where: where,
    option: 'maxResponseBytes',
    min: 1,
    default: 1_048_576,
  });
  const maxRedirects = requireInteger(options.maxRedirects, {
    where: where,
    option: 'maxRedirects',
    min: 0,
    max: 20,
    default: 5,
  });
  const policy = addressPolicy(options.allow, where);
  if (options.resolveHost !== undefined && typeof options.resolveHost !== 'function') {
    throw optionError({
      where: where,
      option: 'resolveHost',
      message: 'resolveHost must be a function (hostname) => Promise<{ address, family }[]>',
    });
  }
  const lookup = guardedLookup(policy, options.resolveHost ?? systemResolver);
  const idempotent = requireBoolean(options.idempotent, {
    where: where,
    option: 'idempotent',
    default: safe,
  });
  const idempotencyHeader = idempotencyHeaderOption(options.idempotencyHeader, where);
  const clock = requireClock(options.clock, { where: where, option: 'clock', default: systemClock });
  const agents = {
    http: new HttpAgent({ keepAlive: true, lookup }),
    https: new HttpsAgent({ keepAlive: true, lookup }),
  };

  const execute = async (input: Input, context: ToolContext): Promise<HttpOutput> => {
    const url = buildUrl(template, input);
    const requestHeaders = await buildHeaders(headers, input, context);
    if (!safe && idempotencyHeader !== false)
      requestHeaders[idempotencyHeader.toLowerCase()] ??= context.idempotencyKey;
    let payload: Buffer | undefined;
    if (body !== undefined) {
      payload = Buffer.from(JSON.stringify(body.build(input)) ?? 'null');
      requestHeaders['content-type'] ??= 'application/json';
    }
    const target = `${method} ${url.origin}${url.pathname}`;
    // An endpoint that echoes the token it was sent (a 401 text, a 500 JSON) must not hand it to the model, the
    // run's error, its events or its store: the values this call sends are removed from what comes back.
    const echoes = secretValueRedactor(secretHeaderValues(headers, requestHeaders, idempotencyHeader));
    const { signal, timedOut, dispose } = deadline(context.signal, timeoutMs, clock);
    try {
      const response = await exchange({
        method,
        url,
        headers: requestHeaders,
        body: payload,
        maxRedirects,
        maxResponseBytes,
        signal,
        agents,
        policy,
        toolName: options.name,
      });
      const decoded = decodeBody(response.body, response.headers['content-type'], response.truncated);
      if (response.status >= 400) throw statusError({ ...response, decoded }, target, options.name, clock);
      return echoes.value(outputOf(response.status, response.headers['content-type'], decoded));
    } catch (error) {
      if (context.signal.aborted) throw context.signal.reason;
      if (timedOut()) {
        throw new KeelError('tool.timeout', `${target} did not answer within ${timeoutMs} ms`, {
          provider: options.name,
          data: { timeoutMs },
        });
      }
      throw echoes.error(error);
    } finally {
      dispose();
    }
  };

  const built = tool<Input, HttpOutput>({
    name: options.name,
    description: options.description,
    input: options.input,
    inputJsonSchema: options.inputJsonSchema,
    idempotent,
    timeoutMs: Math.min(MAX_TIMER_MS, timeoutMs + 1_000),
    needsApproval: options.needsApproval,
    fallbacks: options.fallbacks,
    execute,
  });
  const reconcile =
    options.reconcile === undefined
      ? undefined
      : reconcileLookup(options.reconcile, {
          where,
          toolName: options.name,
          inputSchema: built.inputSchema,
          headers,
          agents,
          policy,
          maxResponseBytes,
          maxRedirects,
          timeoutMs,
          clock,
        });
  const placeholders = [
    ...template.placeholders,
    ...(body?.placeholders ?? []),
    ...(typeof headers === 'function' ? [] : headers.flatMap(([, parts]) => parts)),
  ].filter((part) => typeof part !== 'string');
  checkPlaceholderNames(placeholders, built.inputSchema, where);
  return reconcile === undefined ? built : Object.freeze({ ...built, reconcile });
}

/** A signal that aborts on the caller's signal or after `timeoutMs`, whichever comes first. */
function deadline(
  caller: AbortSignal,
  timeoutMs: number,
  clock: Clock,
): { signal: AbortSignal; timedOut: () => boolean; dispose: () => void } {
  const controller = new AbortController();
  let expired = false;
  const onAbort = (): void => controller.abort(caller.reason);
  const timer = clock.setTimeout(() => {
    expired = true;
    controller.abort(new KeelError('tool.timeout', `no answer within ${timeoutMs} ms`));
  }, timeoutMs);
  if (caller.aborted) onAbort();
  else caller.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => expired,
    dispose: () => {
      clock.clearTimeout(timer);
      caller.removeEventListener('abort', onAbort);
    },
  };
}

function outputOf(status: number, contentType: string | undefined, decoded: DecodedBody): HttpOutput {
  const output: HttpOutput = { status, body: decoded.body };
  if (contentType !== undefined) output.contentType = contentType;
  if (decoded.note !== undefined) output.note = decoded.note;
  return output;
}

function idempotencyHeaderOption(value: unknown, where: string): string | false {
  if (value === undefined) return 'Idempotency-Key';
  if (value === false || (typeof value === 'string' && HEADER_NAME.test(value))) return value;
  throw optionError({
    where: where,
    option: 'idempotencyHeader',
    message: 'idempotencyHeader must be a header name or false',
  });
}
