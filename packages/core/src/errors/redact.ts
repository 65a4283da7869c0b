/** Replacement text for a secret removed from a message or a serialised error. */
export const REDACTED = '[redacted]';

// Names whose value is a credential, as a header (`x-api-key: ...`), a query parameter (`?api_key=...`,
// `?token=...`), a JSON field (`"password": "..."`) or prose (`client_secret=...`). Prefixes such as `x-goog-`,
// `access_` or `client_` are allowed. The name must end right before the separator, so counts such as
// `max_tokens=4096` or `tokens: 5` are never taken for one.
const CREDENTIAL_NAME =
  '(?:[a-z0-9]+[-_]){0,3}(?:authorization|api[-_]?key|apikey|access[-_]?token|refresh[-_]?token|id[-_]?token|auth[-_]?token|session[-_]?token|token|secret|password|passwd|private[-_]?key)';

/** `name: value`, `name=value`, `"name": "value"`; an auth scheme before the value (`Bearer ...`) is kept. */
const NAMED_CREDENTIAL = new RegExp(
  `\\b(${CREDENTIAL_NAME})(["']?\\s*[:=]\\s*["']?)((?:Bearer|Basic|Token|Digest)\\s+)?([^\\s"',;}&]+)`,
  'gi',
);

/**
 * A `Cookie` or `Set-Cookie` header, or a `cookie` field: its whole value goes (every cookie in it, up to the end of
 * the line or the closing quote), since any cookie may be a session.
 */
const COOKIE = /\b((?:set-)?cookie)(["']?\s*[:=]\s*["']?)([^\r\n"']+)/gi;

/**
 * Names that are also ordinary English words. After one of them, `: ` followed by a plain word ("without a token:
 * anyone who can reach it", "Password: required") is prose, not a credential; a value with a digit, a symbol or a
 * capital inside it, a value after `=`, after a colon with no space, or in quotes, is still taken for one.
 */
const PROSE_NAMES = new Set(['token', 'secret', 'password', 'passwd', 'authorization']);
/** A colon and a space, as prose writes it: no quote, no `=`. */
const PROSE_SEPARATOR = /^\s*:\s+$/;
/** A plain word, perhaps capitalised, perhaps ending a clause or a sentence. */
const PLAIN_WORD = /^[A-Za-z][a-z]*[.!?:)]*$/;

function isProse(name: string, separator: string, scheme: string | undefined, value: string): boolean {
  return (
    scheme === undefined &&
    PROSE_NAMES.has(name.toLowerCase()) &&
    PROSE_SEPARATOR.test(separator) &&
    PLAIN_WORD.test(value)
  );
}

/** Prefixed keys that name themselves. Each prefix is specific enough that prose never contains one. */
const SELF_NAMED_KEYS: readonly RegExp[] = [
  // OpenAI (sk-..., sk-proj-..., sk-svcacct-...), Anthropic (sk-ant-api03-...), and similar pk-/rk- keys.
  /\b(?:sk|pk|rk)-(?:[A-Za-z0-9_-]{2,12}-)?[A-Za-z0-9_-]{16,}/g,
  // AWS access key ids.
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  // GitHub tokens.
  /\b(?:gh[opusr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})/g,
  // Google API keys.
  /\bAIza[0-9A-Za-z_-]{30,}/g,
  // Slack tokens.
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g,
  // JSON Web Tokens: two base64url JSON segments and a signature.
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g,
];

// A credential after an auth scheme looks like one: a digit, a `=`, or a symbol inside it (JWTs, base64), or 20+
// characters. That keeps prose intact ("basic information", "Bearer tokens.") while real values go.
const BEARER = /\b(Bearer)\s+(?=[\w.~+/=-]*(?:\d|=|[.~+/-]\w)|[\w.~+/-]{20,})[\w.~+/-]{6,}=*/gi;
const BASIC = /\b(Basic)\s+(?=[A-Za-z0-9+/]*(?:\d|=|[+/]\w)|[A-Za-z0-9+/]{20,})[A-Za-z0-9+/]{6,}=*/gi;

// Passwords in URLs: scheme://user:password@host, and scheme://:password@host (Redis).
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]{0,30}:\/\/[^\s:/@]*:)[^\s@/]+@/gi;

// A cheap first look: every pattern above needs one of these words or prefixes, so text without any is returned as
// it is, without running the patterns (most messages hold no secret, and KeelError redacts every message it builds).
const SECRET_HINT =
  /authorization|api[-_]?key|apikey|token|secret|passw(?:or)?d|private[-_]?key|cookie|\b[spr]k-|\bA[KS]IA|\bgh[opusr]_|github_pat_|\bAIza|\bxox|\beyJ|bearer|basic|:\/\//i;

/**
 * Returns `text` with credentials replaced by `[redacted]`: provider API keys (OpenAI, Anthropic and other
 * self-naming keys), bearer and basic credentials, the values of credential-named headers, parameters and fields
 * (`Authorization`, `x-api-key`, `api_key`, `token`, `access_token`, `password`, `client_secret`, ...), whole
 * `Cookie` and `Set-Cookie` values, and passwords in URLs. Names, schemes and the rest of the text are kept as they
 * are; counts such as `max_tokens=4096` are not credentials, and neither is prose: a plain word after `token: `,
 * `secret: `, `password: ` or `authorization: ` ("without a token: anyone who can reach it") stays, as does a
 * `cookie: ` that sets no `name=value`.
 */
export function redactSecrets(text: string): string {
  if (typeof text !== 'string' || !SECRET_HINT.test(text)) return text;
  let result = text.replace(COOKIE, (match, name: string, separator: string, value: string) =>
    // "the cookie: chocolate chip" is prose; a cookie header always sets a name to a value.
    PROSE_SEPARATOR.test(separator) && !value.includes('=') ? match : `${name}${separator}${REDACTED}`,
  );
  result = result.replace(
    NAMED_CREDENTIAL,
    (match, name: string, separator: string, scheme: string | undefined, value: string) =>
      isProse(name, separator, scheme, value) ? match : `${name}${separator}${scheme ?? ''}${REDACTED}`,
  );
  for (const pattern of SELF_NAMED_KEYS) result = result.replace(pattern, REDACTED);
  result = result.replace(BEARER, (_match, scheme: string) => `${scheme} ${REDACTED}`);
  result = result.replace(BASIC, (_match, scheme: string) => `${scheme} ${REDACTED}`);
  result = result.replace(URL_PASSWORD, (_match, prefix: string) => `${prefix}${REDACTED}@`);
  return result;
}

const SECRET_KEY_SUFFIXES = [
  'authorization',
  'apikey',
  'token',
  'secret',
  'password',
  'passwd',
  'privatekey',
  'cookie',
  'credentials',
  'credential',
] as const;

/**
 * True when a property or header name usually holds a secret (its value is dropped whole when serialised):
 * `authorization`, `x-api-key`, `apiKey`, `openaiApiKey`, `password`, `dbPassword`, `client_secret`,
 * `access_token`, `cookie`, `set-cookie`, ... Case, `-` and `_` are ignored; counts such as `max_tokens` are not
 * secrets.
 */
export function isSecretKey(key: string): boolean {
  if (typeof key !== 'string') return false;
  const normalized = key.toLowerCase().replace(/[-_\s]/g, '');
  return SECRET_KEY_SUFFIXES.some((suffix) => normalized.endsWith(suffix));
}
