import { ERROR_CODES, type ErrorCategory, type ErrorCode, isErrorCode } from './codes.js';
import { readableCause } from './readable-cause.js';
import { redactSecrets } from './redact.js';
import { isInstanceSafely } from './safe-read.js';
import { deserializeError, type SerializedError, serializeError } from './serialize.js';

/** A JSON value, as stored in an error's `data`. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

const KEEL_ERROR = Symbol.for('keel.error');

/** What a {@link KeelError} is made from, besides `code` and `message`. Every field is optional. */
export interface KeelErrorOptions {
  /** Whether trying again may succeed. Defaults to the code's own retryability (`ERROR_CODES[code].retryable`). */
  retryable?: boolean;
  /** How long the source asked us to wait before trying again, in milliseconds. Defaults to undefined (no ask). */
  retryAfterMs?: number;
  /** The HTTP status that produced the error. Defaults to undefined (not an HTTP error). */
  status?: number;
  /** The provider (or tool, or store) that produced the error, such as `openai`. Defaults to undefined. */
  provider?: string;
  /** Structured facts about the error; must be JSON. Defaults to `{}`. */
  data?: Record<string, JsonValue>;
  /** Text the model (or the user) can act on to avoid the error; secrets are redacted. Defaults to undefined. */
  guidance?: string;
  /** What caused this error, kept as the standard `cause`. Defaults to undefined. */
  cause?: unknown;
}

/**
 * The one error type of keel. Told apart by `code` (public API), recognised across bundles by a `Symbol.for` brand.
 *
 * @example
 *   throw new KeelError('tool.timeout', 'get_weather did not answer within 5000 ms', { data: { timeoutMs: 5000 } });
 */
export class KeelError extends Error {
  readonly [KEEL_ERROR] = true;
  readonly code: ErrorCode;
  readonly category: ErrorCategory;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  readonly status: number | undefined;
  readonly provider: string | undefined;
  readonly data: Readonly<Record<string, JsonValue>>;
  readonly guidance: string | undefined;

  constructor(code: ErrorCode, message: string, options: KeelErrorOptions = {}) {
    super(
      redactSecrets(message),
      // A cause that cannot be read (a revoked proxy, say) would make `console.log(error)` throw: a copy stands in.
      options.cause === undefined
        ? undefined
        : {
            cause: isInstanceSafely(options.cause, KeelError) ? options.cause : readableCause(options.cause),
          },
    );
    if (!isErrorCode(code)) throw new TypeError(`Unknown keel error code: ${String(code)}`);
    this.name = 'KeelError';
    this.code = code;
    this.category = ERROR_CODES[code].category;
    this.retryable = options.retryable ?? ERROR_CODES[code].retryable;
    this.retryAfterMs = options.retryAfterMs;
    this.status = options.status;
    this.provider = options.provider;
    this.data = Object.freeze({ ...(options.data ?? {}) });
    this.guidance = options.guidance === undefined ? undefined : redactSecrets(options.guidance);
  }

  /**
   * True when `value` is a KeelError this keel can use as it is, even one from another copy of keel: it carries the
   * `Symbol.for('keel.error')` brand, a code this keel knows, and `message`, `category`, `retryable`, `data` and
   * `toJSON` of the right types. A branded value with an unknown code (from a newer keel) or malformed fields is not
   * one: `classify` rebuilds it. Never throws, whatever `value` is (a revoked proxy, throwing getters).
   */
  static isInstance(value: unknown): value is KeelError {
    if (typeof value !== 'object' || value === null) return false;
    try {
      const candidate = value as Record<PropertyKey, unknown>;
      return (
        candidate[KEEL_ERROR] === true &&
        isErrorCode(candidate.code) &&
        typeof candidate.message === 'string' &&
        typeof candidate.category === 'string' &&
        typeof candidate.retryable === 'boolean' &&
        typeof candidate.data === 'object' &&
        candidate.data !== null &&
        typeof candidate.toJSON === 'function'
      );
    } catch {
      return false;
    }
  }

  /**
   * Rebuilds a KeelError from {@link KeelError.toJSON}'s output, code, class and causes included. A serialised error
   * without a known code comes back as `internal.unexpected` with the original as its cause.
   */
  static fromJSON(serialized: SerializedError): KeelError {
    const error = deserializeError(serialized);
    return KeelError.isInstance(error)
      ? error
      : new KeelError('internal.unexpected', error.message, { cause: error });
  }

  /** The error as JSON: causes serialised recursively (depth-capped, cycle-safe), secrets redacted. */
  toJSON(): SerializedError {
    return serializeError(this);
  }
}
