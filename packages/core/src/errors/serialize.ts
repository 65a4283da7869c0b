import { ERROR_CODES, type ErrorCode, isErrorCode } from './codes.js';
import { readProperty } from './error-chain.js';
import { type JsonValue, KeelError } from './keel-error.js';
import { isSecretKey, REDACTED, redactSecrets } from './redact.js';
import { isArraySafely, isInstanceSafely, stringOf } from './safe-read.js';

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
  const result = describeSafely(error);
  const cause = readProperty(error, 'cause');
  if (cause !== undefined) {
    result.cause =
      depth + 1 >= MAX_CAUSE_DEPTH
        ? { name: 'Truncated', message: '[cause chain truncated]' }
        : serializeAt(cause, depth + 1, seen);
  }
  return result;
}

function describeSafely(error: unknown): SerializedError {
  try {
    return describe(error);
  } catch {
    // A value that passed the checks below and still threw (a getter that throws on its second read, say).
    return { name: 'NonError', message: `[a thrown ${typeof error} that cannot be read]` };
  }
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
    isInstanceSafely(error, Error) ||
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
    return { name: 'NonError', message: clip(redactSecrets(stringOf(error))) };
  }
  let text: string;
  try {
    text = JSON.stringify(toSafeJson(error, 0, new Set())) ?? stringOf(error);
  } catch {
    text = stringOf(error);
  }
  return { name: 'NonError', message: clip(redactSecrets(text)) };
}

/**
 * Any value as JSON: secret-named keys dropped, strings redacted, cycles and depth cut, non-JSON values described,
 * and values that cannot be read (proxies, throwing getters) replaced by `[unreadable]`. Never throws.
 */
export function toJsonData(value: unknown): JsonValue {
  return toSafeJson(value, 0, new Set());
}

function toSafeJson(value: unknown, depth: number, ancestors: Set<unknown>): JsonValue {
  try {
    return toSafeJsonUnguarded(value, depth, ancestors);
  } catch {
    return '[unreadable]';
  }
}

function toSafeJsonUnguarded(value: unknown, depth: number, ancestors: Set<unknown>): JsonValue {
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'string') return clip(redactSecrets(value));
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object') return `[${typeof value}]`;
  if (depth > MAX_DATA_DEPTH) return '[too deep]';
  if (ancestors.has(value)) return '[cycle]';
  if (isInstanceSafely(value, Date))
    return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
  if (isInstanceSafely(value, Error)) return clip(redactSecrets(`${value.name}: ${value.message}`));
  ancestors.add(value);
  try {
    if (isArraySafely(value)) return value.map((item) => toSafeJson(item, depth + 1, ancestors));
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
    return new Error(`Not a serialised error: ${stringOf(serialized).slice(0, 200)}`);
  }
  // Each field is read once, through readProperty: a stored value is plain JSON, but a value handed in is not always.
  const field = (key: keyof SerializedError) => readProperty(serialized, key);
  const serializedCause = field('cause');
  const cause =
    typeof serializedCause === 'object' && serializedCause !== null && depth + 1 <= MAX_CAUSE_DEPTH
      ? deserializeAt(serializedCause as SerializedError, depth + 1)
      : undefined;
  const messageField = field('message');
  const message = typeof messageField === 'string' ? messageField : '';
  const dataField = field('data');
  const data = typeof dataField === 'object' && dataField !== null ? toJsonData(dataField) : undefined;
  const record =
    typeof data === 'object' && data !== null && !Array.isArray(data)
      ? (data as Record<string, JsonValue>)
      : undefined;
  const status = field('status');
  const code = field('code');
  if (isErrorCode(code)) {
    const retryable = field('retryable');
    const retryAfterMs = field('retryAfterMs');
    const provider = field('provider');
    const guidance = field('guidance');
    return new KeelError(code, message, {
      retryable: typeof retryable === 'boolean' ? retryable : ERROR_CODES[code].retryable,
      retryAfterMs: typeof retryAfterMs === 'number' ? retryAfterMs : undefined,
      status: typeof status === 'number' ? status : undefined,
      provider: typeof provider === 'string' ? provider : undefined,
      data: record,
      guidance: typeof guidance === 'string' ? guidance : undefined,
      cause,
    });
  }
  const error = new Error(message, cause === undefined ? undefined : { cause });
  const name = field('name');
  if (typeof name === 'string' && name !== '') error.name = name;
  // Restored so that classifying the copy gives what classifying the original gave (ECONNRESET, HTTP 429).
  const systemCode = record?.code;
  if (typeof systemCode === 'string') Object.assign(error, { code: systemCode });
  if (typeof status === 'number') Object.assign(error, { status });
  return error;
}
