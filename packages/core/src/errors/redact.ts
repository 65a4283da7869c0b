/** Replacement text for a secret removed from a message or a serialised error. */
export const REDACTED = '[redacted]';

const SECRET_PATTERNS: readonly RegExp[] = [
  // Provider API keys: OpenAI (sk-..., sk-proj-...), Anthropic (sk-ant-...), and similar prefixed keys.
  /\b(?:sk|pk|rk)-(?:[A-Za-z0-9_-]{2,12}-)?[A-Za-z0-9_-]{16,}/g,
  // Bearer and Basic credentials.
  /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  // Header-style credentials: `Authorization: ...`, `x-api-key: ...`, `api-key=...`.
  /\b(authorization|x-api-key|api[-_]?key|access[-_]?token|secret)(["']?\s*[:=]\s*["']?)[^\s"',;}]+/gi,
  // Passwords in URLs: scheme://user:password@host
  /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)[^\s@/]+@/gi,
];

/** Returns `text` with API keys, bearer tokens, credential headers and URL passwords replaced by `[redacted]`. */
export function redactSecrets(text: string): string {
  let result = text;
  result = result.replace(SECRET_PATTERNS[0]!, REDACTED);
  result = result.replace(SECRET_PATTERNS[1]!, (_match, scheme: string) => `${scheme} ${REDACTED}`);
  result = result.replace(SECRET_PATTERNS[2]!, (_match, name: string, separator: string) => `${name}${separator}${REDACTED}`);
  result = result.replace(SECRET_PATTERNS[3]!, (_match, prefix: string) => `${prefix}${REDACTED}@`);
  return result;
}

const SECRET_KEY = /^(authorization|proxy-authorization|x-api-key|api[-_]?key|apikey|password|passwd|secret|token|access[-_]?token|refresh[-_]?token|client[-_]?secret|cookie|set-cookie)$/i;

/** True when a property or header name usually holds a secret (its value is dropped whole when serialised). */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}
