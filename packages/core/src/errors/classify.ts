import {
  httpExchange,
  messagePattern,
  providerBody,
  systemCode,
  typedCause,
  type Verdict,
} from './builtin-rules.js';
import { ERROR_CODES, type ErrorCode, isErrorCode } from './codes.js';
import { errorChain, messageOf, readProperty } from './error-chain.js';
import { adoptForeignKeelError } from './foreign-keel-error.js';
import { guidanceFor } from './guidance.js';
import { type JsonValue, KeelError } from './keel-error.js';

/**
 * What a user rule says about an error. `classify` builds the KeelError from it, with the classifier's `provider`
 * and the original error as `cause`.
 */
export interface ClassificationMatch {
  /** The keel error code, such as `provider.overloaded`. Required. */
  code: ErrorCode;
  /** The error's message. Defaults to the original error's own message. */
  message?: string;
  /** Whether trying again may succeed. Defaults to the code's retryability. */
  retryable?: boolean;
  /**
   * How long to wait before trying again, in milliseconds (a finite number >= 0); kept only when the result is
   * retryable. Defaults to undefined (no ask).
   */
  retryAfterMs?: number;
  /** The HTTP status to record. Defaults to undefined. */
  status?: number;
  /** Text the model or the user can act on. Defaults to keel's guidance for the code, if it has any. */
  guidance?: string;
  /** Structured facts to record (JSON); `ruleIndex` and `rule` are added. Defaults to `{}`. */
  data?: Record<string, JsonValue>;
}

/** What a user rule is told besides the error. */
export interface RuleContext {
  /** The classifier's `provider` option, if any. */
  provider: string | undefined;
  /** The time to read HTTP dates and reset timestamps against, in epoch milliseconds (`nowMs`, or `Date.now()`). */
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

// Long enough for any provider's message, short enough that an HTML page or a dumped object stays readable.
const MAX_MESSAGE_CHARS = 1_000;

/**
 * Turns any thrown value into a {@link KeelError}, once, where it enters keel. Rules, first match wins: user
 * rules; a KeelError as it is; a value with keel's brand that is not a usable KeelError (one from a newer keel with
 * an unknown code, a forged one) rebuilt from what can be read of it (`data.rule` is `foreign-keel-error`); typed
 * causes (the caller's signal's reason, a `TimeoutError` or `AbortError`, a KeelError inside the cause chain); HTTP
 * status with headers and provider error bodies (the `openai` and `@anthropic-ai/sdk` errors, fetch `Response`,
 * `{ status, headers, body }`); provider error bodies alone; Node and undici system codes; message patterns;
 * otherwise `internal.unexpected`. Every rule after the first three looks at the error and its whole cause chain
 * (`TypeError('fetch failed')` hides the socket error in `cause`). The result keeps the original as `cause`, the HTTP
 * status, the wait the server asked for (`retryAfterMs`, retryable faults only) and, where it helps, guidance;
 * `data.rule` names the rule that decided. Control signals are the caller's to check first (`isControlSignal`):
 * classify turns whatever it is given into an error. Only a throwing user rule makes it throw: hostile values
 * (revoked proxies, throwing getters) are read through guards, and what cannot be read is `internal.unexpected`.
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
  // The caller's signal's reason is a cancellation whatever it looks like (typedCause says so below).
  const signal = options.signal;
  if (signal === undefined || !signal.aborted || signal.reason !== error) {
    const foreign = adoptForeignKeelError(error, provider);
    if (foreign !== undefined) return foreign;
  }
  let verdict: Verdict;
  try {
    const chain = errorChain(error);
    verdict = typedCause(chain, options.signal) ??
      httpExchange(chain, nowMs) ??
      providerBody(chain) ??
      systemCode(chain) ??
      messagePattern(chain) ?? { code: 'internal.unexpected', rule: 'fallback', link: error, data: {} };
  } catch {
    // The rules read through guards, but a value can still trip one (a proxy of headers whose `get` throws):
    // whatever could not be read is not evidence of anything.
    verdict = { code: 'internal.unexpected', rule: 'fallback', link: error, data: { unreadable: true } };
  }
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
      provider: options.provider ?? defaults.provider,
      nowMs: options.nowMs ?? defaults.nowMs,
      signal: options.signal ?? defaults.signal,
      rules: [...(options.rules ?? []), ...(defaults.rules ?? [])],
    });
  };
}

function validateOptions(options: ClassifyOptions, where: string): void {
  const fail = (option: string, what: string) => {
    throw new KeelError('config.invalid', `${where}: ${what}`, { data: { option } });
  };
  if (typeof options !== 'object' || options === null) fail('options', 'options must be an object.');
  if (options.provider !== undefined && typeof options.provider !== 'string')
    fail('provider', 'provider must be a string.');
  if (options.nowMs !== undefined && !Number.isFinite(options.nowMs))
    fail('nowMs', 'nowMs must be a finite number.');
  if (options.rules !== undefined) {
    if (!Array.isArray(options.rules)) fail('rules', 'rules must be an array of functions.');
    options.rules.forEach((rule, index) => {
      if (typeof rule !== 'function')
        fail('rules', `rules[${index}] must be a function, got ${typeof rule}.`);
    });
  }
  if (
    options.signal !== undefined &&
    typeof (options.signal as { aborted?: unknown })?.aborted !== 'boolean'
  ) {
    fail('signal', 'signal must be an AbortSignal.');
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
      const code = readProperty(match, 'code');
      const shown = typeof code === 'string' ? `"${code}"` : typeof match;
      throw new KeelError(
        'config.invalid',
        `Classification rule ${index} returned ${shown}, not a match with a keel error code such as "provider.overloaded".`,
        { data: { ruleIndex: index } },
      );
    }
    const retryAfterMs = match.retryAfterMs;
    if (retryAfterMs !== undefined && !(Number.isFinite(retryAfterMs) && retryAfterMs >= 0)) {
      throw new KeelError(
        'config.invalid',
        `Classification rule ${index} returned retryAfterMs ${String(retryAfterMs)}: it must be a finite number >= 0.`,
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
    guidance: typeof verdict.guidance === 'string' ? verdict.guidance : guidanceFor(verdict.code, provider),
    cause: error,
  });
}
