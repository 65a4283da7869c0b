import { isErrorCode } from './codes.js';
import { readProperty, readString } from './error-chain.js';
import { type JsonValue, KeelError } from './keel-error.js';
import { isSecretKey, REDACTED, redactSecrets } from './redact.js';
import { hasBrand } from './safe-read.js';
import { MAX_CAUSE_DEPTH } from './serialize.js';

/**
 * Secrets shorter than this many characters are not removed literally: they would be found inside ordinary words
 * (`ollama` and `EMPTY`, the keys local servers are given, are not secrets). Credential patterns still apply to them.
 */
export const MIN_SECRET_CHARS = 8;

// Bounds for values copied from errors we did not build: a thrown object can be huge, deep or cyclic.
const MAX_VALUE_DEPTH = 16;
const MAX_BODY_BYTES = 65_536;
const KEEL_ERROR = Symbol.for('keel.error');
const AUTH_SCHEME = /^(?:Bearer|Basic|Token|Digest)\s+(\S+)$/i;

/** Removes known secrets from text and from errors. Made by {@link createRedactor}. */
export interface Redactor {
  /** `text` with every known secret, and every credential {@link redactSecrets} finds, replaced by `[redacted]`. */
  text(text: string): string;
  /**
   * A copy of `error` that is safe to keep, log and store: the same code, retryability, status, provider and
   * retry-after, with the message, stack, guidance and data redacted, and its cause chain rebuilt from redacted
   * copies (plain errors keep their name, message, stack and own fields such as `code`, `status`, `headers` and
   * `body`; other values become redacted JSON; secret-named fields are dropped). `util.inspect`, `console.log`,
   * `JSON.stringify` and `serializeError` then show no known secret, however deep. Causes deeper than
   * `MAX_CAUSE_DEPTH` are dropped. Never throws.
   */
  error(error: KeelError): KeelError;
  error(error: unknown): unknown;
}

/**
 * A redactor that knows `secrets` literally (an API key of any shape: a Groq `gsk_...` key, a 32-hex key, a short
 * `sk-...` key), on top of the credential patterns of {@link redactSecrets}. A secret is also found URL-encoded and
 * JSON-escaped, and an `Authorization`-style value (`Bearer abc...`) also by its credential alone. Undefined, empty
 * and short secrets (under {@link MIN_SECRET_CHARS}) are skipped. Providers build one from their own key and use it
 * where their errors leave them, so nothing downstream (events, run state, checkpoints, logs) can see the key.
 *
 * @example
 *   const redactor = createRedactor([apiKey]);
 *   try { ... } catch (error) { throw redactor.error(classify(error, { provider: 'groq' })); }
 */
export function createRedactor(secrets: Iterable<string | null | undefined> = []): Redactor {
  const literals = new Set<string>();
  for (const secret of secrets) {
    if (typeof secret !== 'string') continue;
    const credential = AUTH_SCHEME.exec(secret.trim())?.[1];
    for (const value of [secret, credential]) {
      if (value === undefined || value.length < MIN_SECRET_CHARS) continue;
      literals.add(value);
      literals.add(encodeURIComponent(value));
      literals.add(JSON.stringify(value).slice(1, -1));
    }
  }
  // Longest first, so that a secret containing another is removed whole.
  const ordered = [...literals].sort((left, right) => right.length - left.length);
  const text = (value: string): string => {
    let result = value;
    for (const literal of ordered) {
      if (result.includes(literal)) result = result.split(literal).join(REDACTED);
    }
    return redactSecrets(result);
  };
  const copy = new ErrorCopier(text);
  return {
    text: (value) => (typeof value === 'string' ? text(value) : value),
    error: ((error: unknown) => copy.any(error, 0, new Set())) as Redactor['error'],
  };
}

class ErrorCopier {
  constructor(private readonly text: (value: string) => string) {}

  /** A redacted copy of any value found in a cause chain; `[unreadable]` for one that throws when looked at. */
  any(value: unknown, depth: number, seen: Set<unknown>): unknown {
    if (typeof value === 'string') return this.text(value);
    if (typeof value !== 'object' || value === null) return this.json(value, 0, new Set());
    if (seen.has(value)) return '[cause cycle]';
    seen.add(value);
    try {
      // Branded values that are not usable KeelErrors (a newer keel's code, a forged one) are copied as KeelErrors too.
      if (KeelError.isInstance(value) || hasBrand(value, KEEL_ERROR)) {
        return this.keelError(value as KeelError, depth, seen);
      }
      if (value instanceof Error || typeof readProperty(value, 'message') === 'string') {
        return this.plainError(value, depth, seen);
      }
      return this.json(value, 0, new Set());
    } catch {
      // A revoked proxy throws even on `instanceof`.
      return '[unreadable]';
    }
  }

  private keelError(error: KeelError, depth: number, seen: Set<unknown>): KeelError {
    const message = this.text(String(readProperty(error, 'message') ?? ''));
    const code = readProperty(error, 'code');
    const guidance = readProperty(error, 'guidance');
    const data = this.json(readProperty(error, 'data') ?? {}, 0, new Set());
    const copy = new KeelError(isErrorCode(code) ? code : 'internal.unexpected', message, {
      retryable: readProperty(error, 'retryable') === true,
      retryAfterMs: numberOrUndefined(readProperty(error, 'retryAfterMs')),
      status: numberOrUndefined(readProperty(error, 'status')),
      provider: readString(error, 'provider'),
      data: typeof data === 'object' && data !== null && !Array.isArray(data) ? data : {},
      guidance: typeof guidance === 'string' ? this.text(guidance) : undefined,
      cause: this.cause(error, depth, seen),
    });
    this.keepStack(copy, error);
    return copy;
  }

  private plainError(error: object, depth: number, seen: Set<unknown>): Error {
    const copy = new Error(this.text(readString(error, 'message') ?? ''));
    const name = readString(error, 'name');
    if (name !== undefined && name !== 'Error') hidden(copy, 'name', name);
    this.keepStack(copy, error);
    let keys: string[] = [];
    try {
      keys = Object.keys(error);
    } catch {
      // A hostile proxy: its own fields are left out.
    }
    for (const key of keys) {
      if (key === 'cause' || key === 'errors' || key === 'stack' || key === 'message' || key === 'name')
        continue;
      const value = readProperty(error, key);
      if (value === undefined || typeof value === 'function') continue;
      (copy as unknown as Record<string, unknown>)[key] = isSecretKey(key)
        ? REDACTED
        : this.json(value, 0, new Set());
    }
    const cause = this.cause(error, depth, seen);
    if (cause !== undefined) hidden(copy, 'cause', cause);
    const members = readProperty(error, 'errors');
    if (Array.isArray(members) && depth + 1 < MAX_CAUSE_DEPTH) {
      hidden(
        copy,
        'errors',
        members.slice(0, 32).map((member) => this.any(member, depth + 1, seen)),
      );
    }
    return copy;
  }

  private cause(error: object, depth: number, seen: Set<unknown>): unknown {
    const cause = readProperty(error, 'cause');
    if (cause === undefined || depth + 1 >= MAX_CAUSE_DEPTH) return undefined;
    return this.any(cause, depth + 1, seen);
  }

  private keepStack(copy: Error, original: object): void {
    const stack = readProperty(original, 'stack');
    if (typeof stack === 'string') hidden(copy, 'stack', this.text(stack));
  }

  /** A value as redacted JSON: secret-named keys dropped, strings redacted, headers and bytes read, cycles cut. */
  json(value: unknown, depth: number, ancestors: Set<unknown>): JsonValue {
    if (value === null || typeof value === 'boolean') return value;
    if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
    if (typeof value === 'string') return this.text(value);
    if (typeof value === 'bigint') return value.toString();
    if (typeof value !== 'object') return `[${typeof value}]`;
    if (depth > MAX_VALUE_DEPTH) return '[too deep]';
    if (ancestors.has(value)) return '[cycle]';
    if (value instanceof Uint8Array) {
      return this.text(new TextDecoder().decode(value.subarray(0, MAX_BODY_BYTES)));
    }
    if (value instanceof Error || KeelError.isInstance(value)) {
      return this.text(`${readString(value, 'name') ?? 'Error'}: ${readString(value, 'message') ?? ''}`);
    }
    ancestors.add(value);
    try {
      if (Array.isArray(value)) return value.map((item) => this.json(item, depth + 1, ancestors));
      const result: Record<string, JsonValue> = {};
      for (const [key, item] of entries(value)) {
        if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
        result[key] = isSecretKey(key) ? REDACTED : this.json(item, depth + 1, ancestors);
      }
      return result;
    } catch {
      return '[unreadable]';
    } finally {
      ancestors.delete(value);
    }
  }
}

/** The entries of a plain object, or of a fetch `Headers`-like object (which has no own enumerable fields). */
function entries(value: object): [string, unknown][] {
  const forEach = readProperty(value, 'forEach');
  if (typeof forEach === 'function' && typeof readProperty(value, 'get') === 'function') {
    const result: [string, unknown][] = [];
    (forEach as (callback: (item: unknown, key: unknown) => void) => void).call(value, (item, key) => {
      if (typeof key === 'string') result.push([key, item]);
    });
    return result;
  }
  return Object.keys(value).map((key) => [key, readProperty(value, key)]);
}

/** Defines a property as Error defines `stack` and `cause`: not enumerable, so inspection shows it once. */
function hidden(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, configurable: true, enumerable: false });
}

function numberOrUndefined(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
