import { ERROR_CODES, type ErrorCode, isErrorCode } from './codes.js';
import { type JsonValue, KeelError } from './keel-error.js';
import { isSecretKey, REDACTED, redactSecrets } from './redact.js';

/** How deep causes are followed when an error is serialised. */
export const MAX_CAUSE_DEPTH = 8;

/** The JSON form of an error. KeelErrors carry `code`; other errors carry only `name` and `message`. */
export interface SerializedError {
  name: string;
  message: string;
  code?: ErrorCode;
  category?: string;
  retryable?: boolean;
  retryAfterMs?: number;
  status?: number;
  provider?: string;
  data?: Record<string, JsonValue>;
  guidance?: string;
  cause?: SerializedError;
}

/**
 * Serialises any thrown value. Causes are followed up to {@link MAX_CAUSE_DEPTH} levels, cycles are cut, and
 * secrets are redacted from messages and data.
 */
export function serializeError(error: unknown): SerializedError {
  return serializeAt(error, 0, new Set());
}

function serializeAt(error: unknown, depth: number, seen: Set<unknown>): SerializedError {
  if (typeof error === 'object' && error !== null) {
    if (seen.has(error)) return { name: 'Cycle', message: '[cause cycle]' };
    seen.add(error);
  }
  const result = describe(error);
  const cause = typeof error === 'object' && error !== null ? (error as { cause?: unknown }).cause : undefined;
  if (cause !== undefined) {
    result.cause =
      depth + 1 >= MAX_CAUSE_DEPTH
        ? { name: 'Truncated', message: '[cause chain truncated]' }
        : serializeAt(cause, depth + 1, seen);
  }
  return result;
}

function describe(error: unknown): SerializedError {
  if (KeelError.isInstance(error)) {
    const result: SerializedError = {
      name: 'KeelError',
      message: redactSecrets(error.message),
      code: error.code,
      category: error.category,
      retryable: error.retryable,
    };
    if (error.retryAfterMs !== undefined) result.retryAfterMs = error.retryAfterMs;
    if (error.status !== undefined) result.status = error.status;
    if (error.provider !== undefined) result.provider = error.provider;
    if (Object.keys(error.data).length > 0) result.data = redactData(error.data, 0) as Record<string, JsonValue>;
    if (error.guidance !== undefined) result.guidance = redactSecrets(error.guidance);
    return result;
  }
  if (error instanceof Error) {
    const result: SerializedError = { name: error.name, message: redactSecrets(error.message) };
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' || typeof code === 'number') result.data = { code: redactSecrets(String(code)) };
    return result;
  }
  if (typeof error === 'string') return { name: 'Error', message: redactSecrets(error) };
  let text: string;
  try {
    text = JSON.stringify(error) ?? String(error);
  } catch {
    text = String(error);
  }
  return { name: 'NonError', message: redactSecrets(text) };
}

function redactData(value: JsonValue, depth: number): JsonValue {
  if (depth > 16) return '[too deep]';
  if (typeof value === 'string') return redactSecrets(value);
  if (Array.isArray(value)) return value.map((item) => redactData(item, depth + 1));
  if (typeof value === 'object' && value !== null) {
    const result: Record<string, JsonValue> = {};
    for (const [key, item] of Object.entries(value)) {
      result[key] = isSecretKey(key) ? REDACTED : redactData(item, depth + 1);
    }
    return result;
  }
  return value;
}

/**
 * Rebuilds an error from its serialised form: a KeelError with its code, data and causes where `code` is known,
 * a plain Error otherwise.
 */
export function deserializeError(serialized: SerializedError): Error {
  const cause = serialized.cause === undefined ? undefined : deserializeError(serialized.cause);
  if (serialized.code !== undefined && isErrorCode(serialized.code)) {
    return new KeelError(serialized.code, serialized.message, {
      retryable: serialized.retryable ?? ERROR_CODES[serialized.code].retryable,
      retryAfterMs: serialized.retryAfterMs,
      status: serialized.status,
      provider: serialized.provider,
      data: serialized.data,
      guidance: serialized.guidance,
      cause,
    });
  }
  const error = new Error(serialized.message, cause === undefined ? undefined : { cause });
  error.name = serialized.name;
  return error;
}
