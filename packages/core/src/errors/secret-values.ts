import { REDACTED } from './redact.js';
import { createRedactor, MIN_SECRET_CHARS } from './redactor.js';

const AUTH_SCHEME = /^(Bearer|Basic|Token|Digest)\s+(\S+)$/i;
const MAX_DEPTH = 64;

/** Removes the values a tool sent (its credentials) from what comes back. Made by {@link secretValueRedactor}. */
export interface SecretValueRedactor {
  /** How many secrets it knows (0: every method returns its input as it is). */
  readonly size: number;
  /** `text` with every form of every known secret replaced by `[redacted]`; nothing else is touched. */
  text(text: string): string;
  /**
   * A copy of a JSON-like value (a tool's output) with every string, and every key of a plain object, passed through
   * {@link SecretValueRedactor.text}. Other values (numbers, class instances) are kept as they are; the value itself
   * when no secret is known.
   */
  value<T>(value: T): T;
  /** What `createRedactor(forms).error(error)` gives: a redacted copy, credential patterns removed too. */
  error(error: unknown): unknown;
}

/**
 * A redactor of the exact secret values a tool or an MCP toolset sends (the values of its headers, the variables it
 * passes to a server), for what comes back: an endpoint or a server that echoes the token it was sent (in a 401
 * text, a 500 JSON, a JSON-RPC error) must not get it into the run's error, its events, its stored state or the
 * model's context. Each secret is found as it is, URL-encoded, JSON-escaped, in base64 and base64url, and for an
 * `Authorization`-style value (`Bearer abc...`) also by its credential alone (and a Basic credential decoded).
 * Secrets shorter than `MIN_SECRET_CHARS` (8) are skipped, as by `createRedactor`: they would be found in ordinary
 * words. Only these values are replaced in results; errors also lose the credential patterns of `redactSecrets`.
 *
 * @example
 *   const echoes = secretValueRedactor(Object.values(headers));
 *   try { return echoes.value(await call()); } catch (error) { throw echoes.error(error); }
 */
export function secretValueRedactor(secrets: Iterable<string | null | undefined>): SecretValueRedactor {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (typeof secret !== 'string') continue;
    const match = AUTH_SCHEME.exec(secret.trim());
    const values = [secret, match?.[2]];
    if (match !== undefined && match !== null && match[1]!.toLowerCase() === 'basic') {
      const decoded = Buffer.from(match[2]!, 'base64').toString('utf8');
      if (/^[\x20-\x7e]+$/.test(decoded)) values.push(decoded);
    }
    for (const value of values) {
      if (value === undefined || value.length < MIN_SECRET_CHARS) continue;
      const bytes = Buffer.from(value, 'utf8');
      for (const form of [
        value,
        encodeURIComponent(value),
        JSON.stringify(value).slice(1, -1),
        bytes.toString('base64').replace(/=+$/, ''),
        bytes.toString('base64url'),
      ]) {
        if (form.length >= MIN_SECRET_CHARS) forms.add(form);
      }
    }
  }
  // Longest first, so that a secret containing another is removed whole.
  const ordered = [...forms].sort((left, right) => right.length - left.length);
  const text = (value: string): string => {
    let result = value;
    for (const form of ordered) if (result.includes(form)) result = result.split(form).join(REDACTED);
    return result;
  };
  const errors = createRedactor(ordered);
  const copy = (value: unknown, depth: number, ancestors: Set<unknown>): unknown => {
    if (typeof value === 'string') return text(value);
    if (typeof value !== 'object' || value === null || depth > MAX_DEPTH || ancestors.has(value))
      return value;
    ancestors.add(value);
    try {
      if (Array.isArray(value)) return value.map((item) => copy(item, depth + 1, ancestors));
      const prototype = Object.getPrototypeOf(value);
      if (prototype !== Object.prototype && prototype !== null) return value;
      const result: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) result[text(key)] = copy(item, depth + 1, ancestors);
      return result;
    } finally {
      ancestors.delete(value);
    }
  };
  return {
    size: ordered.length,
    text: (value) => (ordered.length === 0 || typeof value !== 'string' ? value : text(value)),
    value: <T>(value: T): T => (ordered.length === 0 ? value : (copy(value, 0, new Set()) as T)),
    error: (error) => (ordered.length === 0 ? error : errors.error(error)),
  };
}
