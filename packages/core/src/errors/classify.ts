import { ERROR_CODES, type ErrorCode, isErrorCode } from './codes.js';
import { errorChain, errorNames, messageOf, readProperty, readString } from './error-chain.js';
import { guidanceFor } from './guidance.js';
import { codeForStatus, readHttpDetails } from './http-status.js';
import { type JsonValue, KeelError } from './keel-error.js';
import { codeForMessage, retryHintInMessage } from './message-patterns.js';
import { codeForBody, isProviderBodyShape, type ProviderBody, readProviderBody } from './provider-bodies.js';
import { MAX_RETRY_AFTER_MS, parseDurationMs, readHeader, retryAfterFromHeaders } from './retry-after.js';
import { verdictForSystemCode } from './system-codes.js';

/** What a user rule says about an error. Status, provider and cause are filled in by `classify`. */
export interface ClassificationMatch {
  code: ErrorCode;
  /** Defaults to the error's own message. */
  message?: string;
  /** Defaults to the code's retryability. */
  retryable?: boolean;
  retryAfterMs?: number;
  status?: number;
  guidance?: string;
  data?: Record<string, JsonValue>;
}

/** What a user rule is told besides the error. */
export interface RuleContext {
  provider: string | undefined;
  nowMs: number;
}

/**
 * A user rule, tried before the built-in ones. Return a match (or a ready KeelError, used as it is) to decide,
 * or undefined to let the next rule decide.
 */
export type ClassificationRule = (
  error: unknown,
  context: RuleContext,
) => ClassificationMatch | KeelError | undefined;

/** Options of {@link classify}. */
export interface ClassifyOptions {
  /** Recorded as the error's `provider`, and named in guidance. Defaults to none. */
  provider?: string;
  /** The current time for HTTP-date and timestamp headers, in milliseconds since the epoch. Defaults to `Date.now()`. */
  nowMs?: number;
  /** Rules tried in order before the built-in ones. Defaults to none. */
  rules?: readonly ClassificationRule[];
  /**
   * The caller's signal. When it has aborted and the error is (or is caused by) its reason, whatever that reason
   * is, the result is `run.cancelled` (`network.timeout` for a `TimeoutError` reason). Defaults to none, in which
   * case only reasons named `AbortError` or `TimeoutError` are recognised.
   */
  signal?: AbortSignal;
}

type RuleName =
  | 'user'
  | 'abort'
  | 'keel-error'
  | 'http'
  | 'provider-body'
  | 'system-code'
  | 'message'
  | 'fallback';

interface Verdict {
  code: ErrorCode;
  rule: RuleName;
  link: unknown;
  retryable?: boolean;
  retryAfterMs?: number;
  status?: number;
  guidance?: string;
  detail?: string;
  data: Record<string, JsonValue>;
}

const MAX_MESSAGE_CHARS = 1_000;
const TIMEOUT_NAMES = new Set(['TimeoutError', 'APIConnectionTimeoutError']);
const ABORT_NAMES = new Set(['AbortError', 'APIUserAbortError']);
const CONNECTION_NAMES = new Set(['APIConnectionError', 'FetchError']);

/**
 * Turns any thrown value into a {@link KeelError}, once, where it enters keel. Rules, first match wins: user
 * rules; a KeelError as it is; typed causes (the caller's signal's reason, a `TimeoutError` or `AbortError`, a
 * KeelError inside the cause chain); HTTP status with headers and provider error bodies (the `openai` and
 * `@anthropic-ai/sdk` errors, fetch `Response`, `{ status, headers, body }`); provider error bodies alone; Node
 * and undici system codes; message patterns; otherwise `internal.unexpected`. Every rule after the first two looks
 * at the error and its whole cause chain (`TypeError('fetch failed')` hides the socket error in `cause`). The result
 * keeps the original as `cause`, the HTTP status, the wait the server asked for (`retryAfterMs`, retryable faults
 * only) and, where it helps, guidance; `data.rule` names the rule that decided.
 *
 * @example
 *   try { await callModel(); } catch (error) { throw classify(error, { provider: 'openai' }); }
 */
export function classify(error: unknown, options: ClassifyOptions = {}): KeelError {
  validateOptions(options, 'classify');
  const nowMs = options.nowMs ?? Date.now();
  const provider = options.provider;
  const fromRules = applyUserRules(error, options.rules ?? [], { provider, nowMs });
  if (fromRules !== undefined) return build(error, fromRules, provider);
  if (KeelError.isInstance(error)) return error;
  const chain = errorChain(error);
  const verdict = typedCause(chain, options.signal) ??
    httpExchange(chain, nowMs) ??
    providerBody(chain) ??
    systemCode(chain) ??
    messagePattern(chain) ?? { code: 'internal.unexpected', rule: 'fallback', link: error, data: {} };
  return build(error, verdict, provider);
}

/**
 * A classifier with fixed options. Per-call options override `provider`, `nowMs` and `signal`; per-call rules are
 * tried before the classifier's own.
 *
 * @example
 *   const classifyOpenAI = createClassifier({
 *     provider: 'openai',
 *     rules: [(error) => (String(error).includes('model is loading') ? { code: 'provider.overloaded' } : undefined)],
 *   });
 *   throw classifyOpenAI(error);
 */
export function createClassifier(
  defaults: ClassifyOptions = {},
): (error: unknown, options?: ClassifyOptions) => KeelError {
  validateOptions(defaults, 'createClassifier');
  return (error, options = {}) => {
    validateOptions(options, 'classify');
    return classify(error, {
      ...defaults,
      ...options,
      rules: [...(options.rules ?? []), ...(defaults.rules ?? [])],
    });
  };
}

function validateOptions(options: ClassifyOptions, where: string): void {
  const fail = (what: string) => {
    throw new KeelError('config.invalid', `${where}: ${what}`);
  };
  if (typeof options !== 'object' || options === null) fail('options must be an object.');
  if (options.provider !== undefined && typeof options.provider !== 'string')
    fail('provider must be a string.');
  if (options.nowMs !== undefined && !Number.isFinite(options.nowMs)) fail('nowMs must be a finite number.');
  if (options.rules !== undefined) {
    if (!Array.isArray(options.rules)) fail('rules must be an array of functions.');
    options.rules.forEach((rule, index) => {
      if (typeof rule !== 'function') fail(`rules[${index}] must be a function, got ${typeof rule}.`);
    });
  }
  if (
    options.signal !== undefined &&
    typeof (options.signal as { aborted?: unknown })?.aborted !== 'boolean'
  ) {
    fail('signal must be an AbortSignal.');
  }
}

function applyUserRules(
  error: unknown,
  rules: readonly ClassificationRule[],
  context: RuleContext,
): Verdict | KeelError | undefined {
  for (const [index, rule] of rules.entries()) {
    let match: ClassificationMatch | KeelError | undefined;
    try {
      match = rule(error, context);
    } catch (ruleError) {
      // A broken rule is a bug to fix, not a fault to hide: say so loudly, keeping both errors.
      throw new KeelError('config.invalid', `Classification rule ${index} threw: ${messageOf(ruleError)}`, {
        cause: ruleError,
        data: { ruleIndex: index, originalMessage: messageOf(error).slice(0, MAX_MESSAGE_CHARS) },
      });
    }
    if (match === undefined || match === null) continue;
    if (KeelError.isInstance(match)) return match;
    if (typeof match !== 'object' || !isErrorCode(match.code)) {
      throw new KeelError(
        'config.invalid',
        `Classification rule ${index} returned ${JSON.stringify(readProperty(match, 'code') ?? match)}, not a match with a keel error code.`,
        { data: { ruleIndex: index } },
      );
    }
    return {
      code: match.code,
      rule: 'user',
      link: error,
      retryable: match.retryable,
      retryAfterMs: match.retryAfterMs,
      status: match.status,
      guidance: match.guidance,
      detail: match.message,
      data: { ...(match.data ?? {}), ruleIndex: index },
    };
  }
  return undefined;
}

function typedCause(chain: readonly unknown[], signal: AbortSignal | undefined): Verdict | undefined {
  const timeoutOrCancelled = (link: unknown): Verdict => {
    const timeout = chain.some((candidate) => errorNames(candidate).some((name) => TIMEOUT_NAMES.has(name)));
    return { code: timeout ? 'network.timeout' : 'run.cancelled', rule: 'abort', link, data: {} };
  };
  if (signal?.aborted === true && signal.reason !== undefined && chain.includes(signal.reason)) {
    return timeoutOrCancelled(signal.reason);
  }
  for (const link of chain.slice(1)) {
    if (KeelError.isInstance(link)) {
      return {
        code: link.code,
        rule: 'keel-error',
        link,
        retryable: link.retryable,
        retryAfterMs: link.retryAfterMs,
        status: link.status,
        guidance: link.guidance,
        data: { ...link.data },
      };
    }
  }
  const aborted = chain.find((link) =>
    errorNames(link).some((name) => TIMEOUT_NAMES.has(name) || ABORT_NAMES.has(name)),
  );
  return aborted === undefined ? undefined : timeoutOrCancelled(aborted);
}

function httpExchange(chain: readonly unknown[], nowMs: number): Verdict | undefined {
  for (const link of chain) {
    const details = readHttpDetails(link);
    if (details === undefined || (details.status === undefined && details.headers === undefined)) continue;
    const body = details.body === undefined ? undefined : readProviderBody(details.body);
    const fromBody = body === undefined ? undefined : codeForBody(body);
    const fromStatus = details.status === undefined ? undefined : codeForStatus(details.status);
    const code = fromBody?.specific === true ? fromBody.code : (fromStatus ?? fromBody?.code);
    if (code === undefined) continue;
    const data = bodyData(body);
    const requestId =
      details.headers &&
      (readHeader(details.headers, 'x-request-id') ?? readHeader(details.headers, 'request-id'));
    if (requestId) data.requestId = requestId;
    const detail =
      body?.message ??
      (typeof details.body === 'string' && !details.body.trimStart().startsWith('<')
        ? details.body
        : undefined) ??
      readString(link, 'message') ??
      readString(link, 'statusText');
    return {
      code,
      rule: 'http',
      link,
      status: details.status,
      retryAfterMs:
        (details.headers && retryAfterFromHeaders(details.headers, nowMs)) ??
        retryAfterFromMessage(code, detail),
      detail: details.status === undefined ? detail : `HTTP ${details.status}${detail ? `: ${detail}` : ''}`,
      data,
    };
  }
  return undefined;
}

function providerBody(chain: readonly unknown[]): Verdict | undefined {
  for (const link of chain) {
    if (!isProviderBodyShape(link)) continue;
    const body = readProviderBody(link);
    const verdict = body === undefined ? undefined : codeForBody(body);
    if (verdict === undefined) continue;
    return {
      code: verdict.code,
      rule: 'provider-body',
      link,
      retryAfterMs: retryAfterFromMessage(verdict.code, body?.message),
      detail: body?.message,
      data: bodyData(body),
    };
  }
  return undefined;
}

function systemCode(chain: readonly unknown[]): Verdict | undefined {
  for (const link of chain) {
    const code = readString(link, 'code');
    const verdict = code === undefined ? undefined : verdictForSystemCode(code);
    if (verdict === undefined || code === undefined) continue;
    return {
      code: verdict.code,
      rule: 'system-code',
      link,
      retryable: verdict.retryable,
      guidance: verdict.guidance,
      data: { systemCode: code },
    };
  }
  const connection = chain.find((link) => errorNames(link).some((name) => CONNECTION_NAMES.has(name)));
  return connection === undefined
    ? undefined
    : { code: 'network.connection', rule: 'system-code', link: connection, data: {} };
}

function messagePattern(chain: readonly unknown[]): Verdict | undefined {
  for (const link of chain) {
    const message = typeof link === 'string' ? link : readString(link, 'message');
    const code = message === undefined ? undefined : codeForMessage(message);
    if (code === undefined) continue;
    return { code, rule: 'message', link, retryAfterMs: retryAfterFromMessage(code, message), data: {} };
  }
  return undefined;
}

function retryAfterFromMessage(code: ErrorCode, message: string | undefined): number | undefined {
  if (code !== 'provider.rate_limited' || message === undefined) return undefined;
  const hint = retryHintInMessage(message);
  const milliseconds = hint === undefined ? undefined : parseDurationMs(hint);
  return milliseconds === undefined ? undefined : Math.min(milliseconds, MAX_RETRY_AFTER_MS);
}

function bodyData(body: ProviderBody | undefined): Record<string, JsonValue> {
  const data: Record<string, JsonValue> = {};
  if (body?.code !== undefined) data.providerCode = body.code;
  if (body?.type !== undefined) data.providerType = body.type;
  return data;
}

function build(error: unknown, verdict: Verdict | KeelError, provider: string | undefined): KeelError {
  if (KeelError.isInstance(verdict)) return verdict;
  const top = messageOf(error);
  let detail: string;
  if (verdict.link === error) detail = verdict.detail ?? top;
  else {
    const inner = verdict.detail ?? messageOf(verdict.link);
    detail = inner === top || inner === '' ? top : `${top}: ${inner}`;
  }
  const message = detail.length > MAX_MESSAGE_CHARS ? `${detail.slice(0, MAX_MESSAGE_CHARS)}…` : detail;
  const retryable = verdict.retryable ?? ERROR_CODES[verdict.code].retryable;
  return new KeelError(verdict.code, message || verdict.code, {
    retryable,
    // A wait only matters for a fault worth retrying: a 400 carrying Retry-After is still a 400.
    retryAfterMs: retryable ? verdict.retryAfterMs : undefined,
    status: verdict.status,
    provider,
    data: { ...verdict.data, rule: verdict.rule },
    guidance: verdict.guidance ?? guidanceFor(verdict.code, provider),
    cause: error,
  });
}
