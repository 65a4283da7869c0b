import { isSecretKey } from '@keel/core/adapter';
import type { McpTarget } from './options.js';

/** A variable name that usually holds a secret: `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`, `DB_PASSWORD`, ... */
const SECRET_WORD =
  /(^|[-_])(key|secret|token|password|passwd|pass|credentials?|auth|session|cookie|signature|pat)([-_]|$)/i;
/** Headers whose value is never a secret. */
const PLAIN_HEADERS = new Set([
  'accept',
  'accept-language',
  'content-language',
  'content-type',
  'user-agent',
]);

/**
 * The secret values a toolset sends its server, to redact from what the server sends back: over HTTP, the value of
 * every header it was given but a few plain ones (`accept`, `content-type`, `user-agent`, ...); over stdio, the value
 * of every variable of `env` whose name says it holds a secret (`*_TOKEN`, `*_KEY`, `*_SECRET_*`, `PASSWORD`, ...).
 * Other variables (a directory, a log level) are not secrets, and redacting them would mangle the server's answers.
 */
export function sentSecrets(target: McpTarget): string[] {
  if (target.kind === 'http') {
    return Object.entries(target.headers)
      .filter(([name]) => !PLAIN_HEADERS.has(name.toLowerCase()))
      .map(([, value]) => value);
  }
  return Object.entries(target.env)
    .filter(([name]) => isSecretKey(name) || SECRET_WORD.test(name))
    .map(([, value]) => value);
}
