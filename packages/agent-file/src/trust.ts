import { BlockList, isIP } from 'node:net';
import { KeelError } from '@keel/core';
import type { AgentFile } from './agent-file.js';
import { hostOf, onProviderHost, PROVIDER_HOSTS, parseAllowedHost } from './key-hosts.js';
import { namesSecret } from './secrets.js';

// What an agent file may make keel do without the consent of the person running keel. An agent file is data that may
// come from someone else; the command line is the person's word. The rule (the README's "Trust model" states it):
//
// 1. A conversation (and with it every file `read_file` read) goes without consent only to the model provider's own
//    host over https, to the offline simulated provider, and to this machine (localhost, 127.0.0.0/8, ::1). Any other
//    `baseUrl`, every `http:` tool URL and every `mcp: url` host needs `--allow-host HOST` (or `--allow-key-host
//    HOST`, which implies it).
// 2. Every `allow:` entry of an `http:` tool opens the SSRF guard (loopback, private and reserved ranges) and needs
//    `--allow-host` naming that same entry, or a range holding it.
// 3. Every program (`command:` tools, `mcp:` servers run by keel) needs `--allow-programs`.
// 4. A program gets a variable of keel's environment whose name looks like a secret only with `--allow-env NAME`.

/** The consent the command line gives (`--allow-host`, `--allow-programs`, `--allow-env`). Defaults to none. */
export interface TrustFlags {
  /** Hosts (`name`, `name:port`) and address ranges (`10.1.0.0/16`, `127.0.0.1`) data may go to. Defaults to none. */
  allowedHosts?: readonly string[];
  /** Whether the file may start programs (`command:` tools, `mcp:` servers run by keel). Defaults to false. */
  allowPrograms?: boolean;
  /** Variables whose names look like secrets that programs may get from keel's environment. Defaults to none. */
  allowedEnv?: readonly string[];
}

/** The consent flags of parsed arguments, checked. */
export function trustFlagsOf(values: {
  'allow-host'?: string[] | undefined;
  'allow-programs'?: boolean | undefined;
  'allow-env'?: string[] | undefined;
}): TrustFlags {
  const flags: TrustFlags = {};
  const hosts = (values['allow-host'] ?? []).map(parseAllowedHostOrRange);
  if (hosts.length > 0) flags.allowedHosts = hosts;
  if (values['allow-programs'] === true) flags.allowPrograms = true;
  const names = values['allow-env'] ?? [];
  for (const name of names) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new KeelError(
        'config.invalid',
        `--allow-env takes a variable name, such as GITHUB_TOKEN, not "${name}"`,
      );
  }
  if (names.length > 0) flags.allowedEnv = names;
  return flags;
}

/** Both sets of consent together: a resumed run keeps what it was started with, and adds what it is given now. */
export function mergeTrustFlags(...all: (TrustFlags | undefined)[]): TrustFlags {
  const merged: TrustFlags = {};
  const hosts = [...new Set(all.flatMap((flags) => flags?.allowedHosts ?? []))];
  if (hosts.length > 0) merged.allowedHosts = hosts;
  if (all.some((flags) => flags?.allowPrograms === true)) merged.allowPrograms = true;
  const names = [...new Set(all.flatMap((flags) => flags?.allowedEnv ?? []))];
  if (names.length > 0) merged.allowedEnv = names;
  return merged;
}

/** Checks and normalises an `--allow-host` value: `name`, `name:port`, an IP address or a CIDR range. */
export function parseAllowedHostOrRange(value: string): string {
  const range = parseRange(value);
  if (range !== undefined) return range.text;
  try {
    return parseAllowedHost(value);
  } catch {
    throw new KeelError(
      'config.invalid',
      `--allow-host takes a host name, with a port if needed, or an address range (such as llm.internal, 10.0.0.5:8080 or 10.1.0.0/16), not "${value}"`,
    );
  }
}

/** Whether a URL host name is this machine: `localhost`, 127.0.0.0/8 or ::1 (URL host names, so `[::1]`). */
export function isLoopbackHost(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name === '[::1]' || name === '::1') return true;
  return isIP(name) === 4 && name.startsWith('127.');
}

/** What one refusal says: where, what, and the flag that would allow it. */
interface TrustProblem {
  field: string;
  problem: string;
  flag: string;
}

/**
 * Refuses an agent file that would send data to a host, open the SSRF guard, start a program or pass a secret
 * without the consent `flags` (and `allowedKeyHosts`, which count as allowed hosts) give. One `config.invalid`
 * KeelError lists every missing consent, each located (`file:line:column: field ...`), and its guidance names the
 * exact flags to add. Nothing has started when it throws.
 */
export function checkTrust(
  file: AgentFile,
  flags: TrustFlags,
  allowedKeyHosts: readonly string[] = [],
): void {
  const hosts = [...(flags.allowedHosts ?? []), ...allowedKeyHosts];
  const problems: TrustProblem[] = [];
  const models = [
    ...(file.model === undefined ? [] : [{ entry: file.model, field: 'model' }]),
    ...file.fallbacks.map((entry, index) => ({ entry, field: `fallbacks[${index}]` })),
  ];
  for (const { entry, field } of models) {
    if (entry.provider === 'simulated' || onProviderHost(entry)) continue;
    const url = new URL(entry.baseUrl ?? `https://${hostOf(entry)}`);
    if (isLoopbackHost(url.hostname) || hostAllowed(url, hosts)) continue;
    const own = `https://${PROVIDER_HOSTS[entry.provider]}`;
    problems.push({
      field: entry.baseUrl === undefined ? field : `${field}.baseUrl`,
      problem: `would send the conversation (and every file the agent reads) to ${url.host}, which is neither ${entry.provider}'s own host (${own}) nor this machine`,
      flag: `--allow-host ${url.host}`,
    });
  }
  for (const tool of file.tools) {
    // An agent entry's file was checked as it was read, with the same consent.
    if (tool.kind === 'builtin' || tool.kind === 'agent') continue;
    if (tool.kind === 'http') {
      const url = new URL(tool.url);
      if (!isLoopbackHost(url.hostname) && !hostAllowed(url, hosts)) {
        problems.push({
          field: `${tool.field}.url`,
          problem: `would send the model's arguments to ${url.host}`,
          flag: `--allow-host ${url.host}`,
        });
      }
      (tool.allow ?? []).forEach((entry, index) => {
        if (allowEntryConsented(entry, hosts)) return;
        problems.push({
          field: `${tool.field}.allow[${index}]`,
          problem: `lets the tool reach ${entry}, which the SSRF guard blocks (this machine, private or reserved addresses)`,
          flag: `--allow-host ${entry.toLowerCase()}`,
        });
      });
      continue;
    }
    if (tool.kind === 'mcp' && tool.server.kind === 'http') {
      const url = new URL(tool.server.url);
      if (!isLoopbackHost(url.hostname) && !hostAllowed(url, hosts)) {
        problems.push({
          field: `${tool.field}.url`,
          problem: `would send the model's arguments to the MCP server at ${url.host}`,
          flag: `--allow-host ${url.host}`,
        });
      }
      continue;
    }
    const program =
      tool.kind === 'command'
        ? {
            field: `${tool.field}.argv[0]`,
            shown: `the program ${shownProgram(tool.argv.map((part) => [part].flat().join(' ')))}`,
          }
        : tool.server.kind === 'stdio' && tool.server.package !== undefined
          ? { field: `${tool.field}.package`, shown: `the MCP server of ${tool.server.package}` }
          : {
              field: `${tool.field}.command`,
              shown: `the MCP server ${shownProgram([tool.server.kind === 'stdio' ? tool.server.command : '', ...(tool.server.kind === 'stdio' ? tool.server.args : [])])}`,
            };
    if (flags.allowPrograms !== true) {
      problems.push({
        field: program.field,
        problem: `would start ${program.shown}`,
        flag: '--allow-programs',
      });
    }
    const env = tool.kind === 'command' ? tool.env : tool.server.kind === 'stdio' ? tool.server.env : [];
    env.forEach((variable, index) => {
      if (variable.value !== undefined || !looksSecret(variable.name)) return;
      if ((flags.allowedEnv ?? []).includes(variable.name)) return;
      problems.push({
        field: `${tool.field}.env[${index}]`,
        problem: `would pass keel's ${variable.name}, whose name looks like a secret, to a program`,
        flag: `--allow-env ${variable.name}`,
      });
    });
  }
  if (problems.length === 0) return;
  const located = problems.map((entry) => ({ ...entry, at: locationOf(file, entry.field) }));
  const first = located[0]!;
  const flagsToAdd = [...new Set(located.map((entry) => entry.flag))];
  throw new KeelError(
    'config.invalid',
    located
      .map((entry) => `${entry.at.text}: ${entry.field} ${entry.problem} (needs ${entry.flag})`)
      .join('\n'),
    {
      data: {
        file: file.path,
        line: first.at.line,
        column: first.at.column,
        field: first.field,
        flags: flagsToAdd,
      },
      guidance: `An agent file may come from someone else: if you trust it with this, run with ${flagsToAdd.join(' ')}`,
    },
  );
}

/** Whether a variable name looks like it holds a secret (the rule of `apiKeyEnv`, and words such as TOKEN or PASSWORD). */
export function looksSecret(name: string): boolean {
  return (
    namesSecret(name) ||
    /(^|_)(PRIVATE|CREDENTIALS?|PWD|PASSPHRASE|DSN|CERT|PAT|SIGNING)(_|$)/i.test(name) ||
    /(^|_)(DATABASE|DB|REDIS|MONGO(DB)?|POSTGRES(QL)?|PG|MYSQL|AMQP|BROKER)_?(URL|URI)$/i.test(name)
  );
}

function shownProgram(parts: readonly string[]): string {
  const text = parts.map((part) => (/^[\w./:@=-]+$/.test(part) ? part : JSON.stringify(part))).join(' ');
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

function locationOf(file: AgentFile, field: string): { text: string; line: number; column: number } {
  let path = field;
  let text = file.locations[path];
  // The nearest enclosing field the reader located (`tools[1].mcp` for `tools[1].mcp.command`).
  while (text === undefined && /[.[]/.test(path)) {
    path = path.replace(/(\.[^.[]*|\[\d+\])$/, '');
    text = file.locations[path];
  }
  text ??= `${file.path}:1:1`;
  const match = /:(\d+):(\d+)$/.exec(text);
  return { text, line: Number(match?.[1] ?? 1), column: Number(match?.[2] ?? 1) };
}

/** Whether `allowed` (`name`, `name:port`, ranges) names the host of `url`. */
function hostAllowed(url: URL, allowed: readonly string[]): boolean {
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const hostname = url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return allowed.some((entry) => {
    const range = parseRange(entry);
    if (range !== undefined) return range.contains(hostname);
    const explicitPort = /:(\d+)$/.exec(entry)?.[1];
    const name = explicitPort === undefined ? entry : entry.slice(0, -explicitPort.length - 1);
    return (
      name.replace(/^\[|\]$/g, '') === hostname &&
      (explicitPort === undefined || Number(explicitPort) === port)
    );
  });
}

/** Whether an `allow:` entry is named on the command line: the same entry, or a range that holds it. */
function allowEntryConsented(entry: string, allowed: readonly string[]): boolean {
  const name = entry.toLowerCase().replace(/\.$/, '');
  const range = parseRange(name);
  return allowed.some((given) => {
    if (given === name) return true;
    const givenRange = parseRange(given);
    if (givenRange === undefined || range === undefined) return false;
    return (
      range.family === givenRange.family &&
      range.prefix >= givenRange.prefix &&
      givenRange.contains(range.network)
    );
  });
}

interface Range {
  text: string;
  network: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
  contains(address: string): boolean;
}

/** An IP address or CIDR range (`10.1.0.0/16`, `127.0.0.1`, `::1`), or undefined. */
function parseRange(value: string): Range | undefined {
  const [address = '', prefixText, ...rest] = value.replace(/^\[|\]$/g, '').split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return undefined;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  const maximum = version === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = prefixText === undefined ? maximum : Number(prefixText);
  if (prefix > maximum) return undefined;
  const list = new BlockList();
  list.addSubnet(address, prefix, family);
  return {
    text: prefixText === undefined ? address.toLowerCase() : `${address.toLowerCase()}/${prefix}`,
    network: address,
    prefix,
    family,
    contains: (candidate) => isIP(candidate) === version && list.check(candidate, family),
  };
}
