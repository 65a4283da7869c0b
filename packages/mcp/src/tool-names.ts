import { createHash } from 'node:crypto';

/** The longest tool name OpenAI and Anthropic both accept. */
const MAX_NAME_LENGTH = 64;
const HASH_LENGTH = 8;

/**
 * The keel names for a server's tools, in the order listed: `<prefix>_<name>` (or `<name>` without a prefix), with
 * every character providers refuse (anything but letters, digits, `_` and `-`; MCP also allows `.` and `/`) replaced
 * by `_`. A name longer than 64 characters, or one that collides with an earlier name after that replacement, is cut
 * and ends with 8 hex digits of a hash of the server's name, so that it stays the same across reconnects.
 *
 * @example
 *   keelToolNames(['read_file', 'git.log'], 'fs'); // ['fs_read_file', 'fs_git_log']
 */
export function keelToolNames(serverNames: readonly string[], prefix: string | undefined): string[] {
  const used = new Set<string>();
  return serverNames.map((serverName) => {
    const plain = `${prefix === undefined ? '' : `${prefix}_`}${serverName.replace(/[^a-zA-Z0-9_-]/g, '_')}`;
    const name = plain.length <= MAX_NAME_LENGTH && !used.has(plain) ? plain : hashed(plain, serverName);
    used.add(name);
    return name;
  });
}

function hashed(plain: string, serverName: string): string {
  const digest = createHash('sha256').update(serverName).digest('hex').slice(0, HASH_LENGTH);
  return `${plain.slice(0, MAX_NAME_LENGTH - HASH_LENGTH - 1)}_${digest}`;
}
