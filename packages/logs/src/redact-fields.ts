import { redactSecrets } from '@keel/core';
import { isSecretKey, REDACTED } from '@keel/core/adapter';

/** Deepest nesting redacted; anything deeper is replaced by `[truncated]` rather than logged unchecked. */
const MAX_DEPTH = 8;

/**
 * A log line's fields with secrets removed: every string through `redact` (defaults to `redactSecrets`; a
 * `Redactor`'s `text` also removes known secret values), and the whole value of any credential-named key (`apiKey`,
 * `authorization`, `password`, ...) replaced by `[redacted]`.
 */
export function redactFields(
  value: unknown,
  redact: (text: string) => string = redactSecrets,
  depth = 0,
): unknown {
  if (typeof value === 'string') return redact(value);
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= MAX_DEPTH) return '[truncated]';
  if (Array.isArray(value)) return value.map((item) => redactFields(item, redact, depth + 1));
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    result[key] = isSecretKey(key) ? REDACTED : redactFields(item, redact, depth + 1);
  }
  return result;
}
