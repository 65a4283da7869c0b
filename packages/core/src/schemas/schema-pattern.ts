/** Longest `pattern` the validator compiles; longer ones are reported as an issue instead of run. */
export const MAX_SCHEMA_PATTERN_LENGTH = 1_000;
/** Longest string a `pattern` is tested against; regular expressions can backtrack badly on huge inputs. */
export const MAX_PATTERN_SUBJECT_LENGTH = 100_000;

const patternCache = new Map<string, RegExp | string>();

/** A compiled pattern, or why it cannot be used. Cached: the same schemas are checked on every call. */
export function compilePattern(pattern: string): RegExp | string {
  const cached = patternCache.get(pattern);
  if (cached !== undefined) return cached;
  let compiled: RegExp | string;
  if (pattern.length > MAX_SCHEMA_PATTERN_LENGTH) {
    compiled = `is longer than ${MAX_SCHEMA_PATTERN_LENGTH} characters`;
  } else {
    try {
      compiled = new RegExp(pattern, 'u');
    } catch {
      try {
        compiled = new RegExp(pattern);
      } catch {
        compiled = 'is not a valid regular expression';
      }
    }
  }
  if (patternCache.size >= 256) patternCache.clear();
  patternCache.set(pattern, compiled);
  return compiled;
}

/** Why a schema `pattern` cannot be used (too long, invalid), or `undefined` when it can. */
export function checkSchemaPattern(pattern: string): string | undefined {
  const compiled = compilePattern(pattern);
  return typeof compiled === 'string' ? compiled : undefined;
}
