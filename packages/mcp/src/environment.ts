import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';

/**
 * The environment a stdio server starts with: the MCP SDK's minimal safe set from this process (`HOME`, `LOGNAME`,
 * `PATH`, `SHELL`, `TERM`, `USER` on POSIX; values that look like shell functions are skipped), then `explicit` on
 * top. Nothing else is inherited, so API keys and tokens in this process's environment stay here unless passed.
 */
export function serverEnvironment(explicit: Readonly<Record<string, string>>): Record<string, string> {
  return { ...getDefaultEnvironment(), ...explicit };
}
