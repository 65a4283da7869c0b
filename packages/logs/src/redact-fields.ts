import { isSecretKey, REDACTED, redactSecrets } from '@keel/core';

/** Deepest nesting redacted; anything deeper is replaced by `[truncated]` rather than logged unchecked. */
const MAX_DEPTH = 8;

/**
 * A log line's fields with secrets removed: every string through `redactSecrets`, and the whole value of any
 * credential-named key (`apiKey`, `authorization`, `password`, ...) replaced by `[redacted]`.
 */
export function redactFields(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactSecrets(value);
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= MAX_DEPTH) return '[truncated]';
  if (Array.isArray(value)) return value.map((item) => redactFields(item, depth + 1));
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    result[key] = isSecretKey(key) ? REDACTED : redactFields(item, depth + 1);
  }
  return result;
}
