import type { ErrorCode } from './codes.js';
import { readProperty, readString } from './error-chain.js';

/** The fields of a provider's error body that classification uses. */
export interface ProviderBody {
  /** OpenAI's `error.code`, such as `context_length_exceeded`. */
  code: string | undefined;
  /** OpenAI's `error.type` or Anthropic's `error.type`, such as `overloaded_error`. */
  type: string | undefined;
  message: string | undefined;
}

/** What a body says, and whether it is specific enough to override the HTTP status. */
export interface BodyVerdict {
  code: ErrorCode;
  /** Specific verdicts (a quota, an overflowing context) refine the status; generic ones only stand in for it. */
  specific: boolean;
}

// Bodies larger than this are not parsed: an error body is small, and a huge one is an HTML page or an attack.
const MAX_BODY_CHARS = 65_536;

/**
 * Reads an error body in OpenAI's form `{ error: { code, type, message } }`, Anthropic's form
 * `{ type: 'error', error: { type, message } }`, the inner object alone (what the `openai` client keeps as
 * `error.error`), or the same as JSON text or bytes. Undefined when none of the fields is there.
 */
export function readProviderBody(value: unknown): ProviderBody | undefined {
  const parsed = parseBody(value);
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const nested = readProperty(parsed, 'error');
  const inner = typeof nested === 'object' && nested !== null ? nested : parsed;
  const code = readProperty(inner, 'code');
  const body: ProviderBody = {
    code: typeof code === 'string' ? code : typeof code === 'number' ? String(code) : undefined,
    type: readString(inner, 'type'),
    message: readString(inner, 'message') ?? (typeof nested === 'string' ? nested : undefined),
  };
  if (body.type === 'error' && inner === parsed) body.type = undefined;
  return body.code === undefined && body.type === undefined && body.message === undefined ? undefined : body;
}

function parseBody(value: unknown): unknown {
  let text: string | undefined;
  if (typeof value === 'string') text = value;
  else if (value instanceof Uint8Array) text = new TextDecoder().decode(value.subarray(0, MAX_BODY_CHARS));
  if (text === undefined) return value;
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') || trimmed.length > MAX_BODY_CHARS) return undefined;
  try {
    return JSON.parse(trimmed);
  } catch {
    return undefined;
  }
}

const SPECIFIC: Readonly<Record<string, ErrorCode>> = {
  // OpenAI codes (and the same words as types in older responses).
  context_length_exceeded: 'provider.context_overflow',
  string_above_max_length: 'provider.context_overflow',
  insufficient_quota: 'provider.quota_exhausted',
  billing_hard_limit_reached: 'provider.quota_exhausted',
  billing_not_active: 'provider.quota_exhausted',
  rate_limit_exceeded: 'provider.rate_limited',
  invalid_api_key: 'provider.auth',
  invalid_organization: 'provider.auth',
  model_not_found: 'provider.not_found',
  content_filter: 'provider.content_filter',
  content_policy_violation: 'provider.content_filter',
  // Anthropic types.
  overloaded_error: 'provider.overloaded',
  rate_limit_error: 'provider.rate_limited',
  authentication_error: 'provider.auth',
  permission_error: 'provider.auth',
  billing_error: 'provider.quota_exhausted',
  not_found_error: 'provider.not_found',
  request_too_large: 'provider.context_overflow',
};

const GENERIC: Readonly<Record<string, ErrorCode>> = {
  invalid_request_error: 'provider.bad_request',
  server_error: 'provider.server_error',
  api_error: 'provider.server_error',
  timeout_error: 'provider.server_error',
};

/** Messages of providers (and OpenAI-compatible servers) refusing a request that does not fit the context. */
export const CONTEXT_OVERFLOW_MESSAGE =
  /prompt is too long|maximum context length|context[ _-]?(?:length|window)|too many (?:input )?tokens|input is too long|reduce the length of the (?:messages|prompt)|exceeds? the (?:model's )?(?:context|maximum number of tokens)/i;

/**
 * Messages of providers refusing a request because the account has no credit or quota left. Anthropic reports an
 * empty credit balance as a 400 `invalid_request_error`; only its message ("Your credit balance is too low to access
 * the Anthropic API") tells.
 */
export const QUOTA_EXHAUSTED_MESSAGE =
  /insufficient[_ ]quota|exceeded your current quota|credit balance is too low/i;

/** What a provider body says, or undefined when it names nothing known. */
export function codeForBody(body: ProviderBody): BodyVerdict | undefined {
  for (const field of [body.code, body.type]) {
    if (field !== undefined && Object.hasOwn(SPECIFIC, field))
      return { code: SPECIFIC[field]!, specific: true };
  }
  // Anthropic reports an overflowing prompt and an empty credit balance as plain invalid_request_errors; only their
  // messages tell.
  if (body.message !== undefined && CONTEXT_OVERFLOW_MESSAGE.test(body.message)) {
    return { code: 'provider.context_overflow', specific: true };
  }
  if (body.message !== undefined && QUOTA_EXHAUSTED_MESSAGE.test(body.message)) {
    return { code: 'provider.quota_exhausted', specific: true };
  }
  for (const field of [body.code, body.type]) {
    if (field !== undefined && Object.hasOwn(GENERIC, field))
      return { code: GENERIC[field]!, specific: false };
  }
  return undefined;
}

/**
 * True when a thrown non-HTTP value is itself a provider error body, such as an error event from a stream:
 * `{ type: 'error', error: {...} }` or `{ error: { code | type, message } }`.
 */
export function isProviderBodyShape(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const inner = readProperty(value, 'error');
  if (typeof inner !== 'object' || inner === null) return false;
  return (
    readString(value, 'type') === 'error' ||
    readString(inner, 'type') !== undefined ||
    readProperty(inner, 'code') !== undefined
  );
}
