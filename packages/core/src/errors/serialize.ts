import { ERROR_CODES, type ErrorCode, isErrorCode } from './codes.js';
import { readProperty } from './error-chain.js';
import { type JsonValue, KeelError } from './keel-error.js';
import { isSecretKey, REDACTED, redactSecrets } from './redact.js';

/** How deep causes are followed when an error is serialised. */
export const MAX_CAUSE_DEPTH = 8;

// Bounds for values that are not ours: a thrown object can be huge, deep or cyclic.
const MAX_DATA_DEPTH = 16;
const MAX_TEXT_CHARS = 4_000;

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
 * secrets are redacted from messages and data (values under secret-named keys are dropped whole). Never throws:
 * hostile values (throwing getters, cycles, BigInts) are described as well as they allow.
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
  const cause = readProperty(error, 'cause');
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
      message: redactSecrets(String(error.message)),
      code: error.code,
      category: error.category,
      retryable: error.retryable,
    };
    if (error.retryAfterMs !== undefined) result.retryAfterMs = error.retryAfterMs;
    if (error.status !== undefined) result.status = error.status;
    if (error.provider !== undefined) result.provider = error.provider;
    if (error.data !== undefined && Object.keys(error.data).length > 0) {
      result.data = toSafeJson(error.data, 0, new Set()) as Record<string, JsonValue>;
    }
    if (error.guidance !== undefined) result.guidance = redactSecrets(String(error.guidance));
    return result;
  }
  const message = readProperty(error, 'message');
  if (
    error instanceof Error ||
    (typeof error === 'object' && error !== null && typeof message === 'string')
  ) {
    const name = readProperty(error, 'name');
    const result: SerializedError = {
      name: typeof name === 'string' && name !== '' ? name : 'Error',
      message: clip(redactSecrets(typeof message === 'string' ? message : '')),
    };
    const code = readProperty(error, 'code');
    if (typeof code === 'string' || typeof code === 'number')
      result.data = { code: redactSecrets(String(code)) };
    const status = readProperty(error, 'status');
    if (typeof status === 'number' && Number.isInteger(status)) result.status = status;
    return result;
  }
  if (typeof error === 'string') return { name: 'Error', message: clip(redactSecrets(error)) };
  if (typeof error !== 'object' || error === null) {
    return { name: 'NonError', message: clip(redactSecrets(safeString(error))) };
  }
  let text: string;
  try {
    text = JSON.stringify(toSafeJson(error, 0, new Set())) ?? safeString(error);
  } catch {
    text = safeString(error);
  }
  return { name: 'NonError', message: clip(redactSecrets(text)) };
}

/** Any value as JSON: secret-named keys dropped, strings redacted, cycles and depth cut, non-JSON values described. */
function toSafeJson(value: unknown, depth: number, ancestors: Set<unknown>): JsonValue {
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'string') return clip(redactSecrets(value));
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object') return `[${typeof value}]`;
  if (depth > MAX_DATA_DEPTH) return '[too deep]';
  if (ancestors.has(value)) return '[cycle]';
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
  if (value instanceof Error) return clip(redactSecrets(`${value.name}: ${value.message}`));
  ancestors.add(value);
  try {
    if (Array.isArray(value)) return value.map((item) => toSafeJson(item, depth + 1, ancestors));
    const result: Record<string, JsonValue> = {};
    for (const key of Object.keys(value)) {
      const item = readProperty(value, key);
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
      result[key] = isSecretKey(key) ? REDACTED : toSafeJson(item, depth + 1, ancestors);
    }
    return result;
  } finally {
    ancestors.delete(value);
  }
}

function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    return `[${typeof value}]`;
  }
}

function clip(text: string): string {
  return text.length > MAX_TEXT_CHARS ? `${text.slice(0, MAX_TEXT_CHARS)}…` : text;
}

/**
 * Rebuilds an error from its serialised form: a KeelError with its code, data and causes where `code` is known,
 * a plain Error otherwise. Input read back from storage is not trusted: missing or mistyped fields are tolerated,
 * and causes deeper than {@link MAX_CAUSE_DEPTH} are dropped. A plain error gets back its `code` and `status`.
 */
export function deserializeError(serialized: SerializedError): Error {
  return deserializeAt(serialized, 0);
}

function deserializeAt(serialized: SerializedError, depth: number): Error {
  if (typeof serialized !== 'object' || serialized === null) {
    return new Error(`Not a serialised error: ${safeString(serialized).slice(0, 200)}`);
  }
  const cause =
    typeof serialized.cause === 'object' && serialized.cause !== null && depth + 1 <= MAX_CAUSE_DEPTH
      ? deserializeAt(serialized.cause, depth + 1)
      : undefined;
  const message = typeof serialized.message === 'string' ? serialized.message : '';
  if (serialized.code !== undefined && isErrorCode(serialized.code)) {
    return new KeelError(serialized.code, message, {
      retryable:
        typeof serialized.retryable === 'boolean'
          ? serialized.retryable
          : ERROR_CODES[serialized.code].retryable,
      retryAfterMs: typeof serialized.retryAfterMs === 'number' ? serialized.retryAfterMs : undefined,
      status: typeof serialized.status === 'number' ? serialized.status : undefined,
      provider: typeof serialized.provider === 'string' ? serialized.provider : undefined,
      data:
        typeof serialized.data === 'object' && serialized.data !== null && !Array.isArray(serialized.data)
          ? serialized.data
          : undefined,
      guidance: typeof serialized.guidance === 'string' ? serialized.guidance : undefined,
      cause,
    });
  }
  const error = new Error(message, cause === undefined ? undefined : { cause });
  if (typeof serialized.name === 'string' && serialized.name !== '') error.name = serialized.name;
  // Restored so that classifying the copy gives what classifying the original gave (ECONNRESET, HTTP 429).
  const code =
    typeof serialized.data === 'object' && serialized.data !== null ? serialized.data.code : undefined;
  if (typeof code === 'string') Object.assign(error, { code });
  if (typeof serialized.status === 'number') Object.assign(error, { status: serialized.status });
  return error;
}
