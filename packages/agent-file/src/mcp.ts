import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import type { McpToolsOptions } from '@keel/mcp';
import type { Node, YAMLMap } from 'yaml';
import type { FieldReader } from './reader.js';
import {
  type EnvEntry,
  environmentOf,
  type HeaderValue,
  headerValuesOf,
  readEnvEntries,
  readHeaders,
} from './secrets.js';
import { readWorkingDirectory, type ToolEntryContext } from './tool-fields.js';

/** How an MCP server is reached: a program over stdio, or a URL. */
export type McpServerEntry =
  | {
      kind: 'stdio';
      command: string;
      args: string[];
      cwd: string;
      env: EnvEntry[];
      /** The npm package whose program `command` (this Node.js) runs, when the file named one. */
      package?: string;
    }
  | { kind: 'http'; url: string; headers: Record<string, HeaderValue> };

/** An `mcp:` entry: the tools of an MCP server, connected when the agent first needs them. */
export interface McpEntry {
  kind: 'mcp';
  /** Its field, such as `tools[1].mcp`. */
  field: string;
  name?: string;
  prefix?: string;
  server: McpServerEntry;
  timeoutMs?: number;
  connectTimeoutMs?: number;
  destructiveNeedsApproval?: boolean;
  include?: string[];
  exclude?: string[];
}

const FIELDS = [
  'name',
  'prefix',
  'package',
  'command',
  'args',
  'env',
  'cwd',
  'url',
  'headers',
  'timeoutMs',
  'connectTimeoutMs',
  'destructiveNeedsApproval',
  'include',
  'exclude',
] as const;
const TARGETS = ['package', 'command', 'url'] as const;
const PACKAGE_NAME = /^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;
const MAX_TIMER_MS = 2_147_483_647;
/** What `mcpTools` accepts as a prefix. */
const PREFIX = /^[a-zA-Z0-9_-]{1,32}$/;
const require = createRequire(import.meta.url);

/**
 * Reads an `mcp:` entry at `field`, checked as `mcpTools` checks its options. (`@keel/mcp` and the MCP SDK are loaded
 * only when a file has an MCP server, so the check is written out here rather than made by calling `mcpTools`.)
 */
export function readMcpEntry(
  reader: FieldReader,
  map: YAMLMap,
  field: string,
  context: ToolEntryContext,
): McpEntry {
  reader.rejectUnknownFields(map, FIELDS, `${field}.`);
  const targets = TARGETS.filter((key) => map.has(key));
  if (targets.length !== 1) {
    reader.fail(
      targets.length === 0 ? map : (map.get(targets[1]!, true) as Node),
      targets.length === 0 ? field : `${field}.${targets[1]}`,
      targets.length === 0
        ? 'needs one of package (an npm package run with the Node.js running keel), command (a program) or url (a server over HTTP)'
        : `gives ${targets.join(' and ')}: give only one of package, command and url`,
    );
  }
  const target = targets[0]!;
  const stdioOnly = ['args', 'env', 'cwd'] as const;
  for (const key of target === 'url' ? stdioOnly : (['headers'] as const)) {
    if (map.has(key))
      reader.fail(
        map.get(key, true) as Node,
        `${field}.${key}`,
        `applies only to a server ${target === 'url' ? 'run by keel (package or command)' : 'over HTTP (url)'}`,
      );
  }
  let server: McpServerEntry;
  if (target === 'url') {
    const url = reader.string(map, 'url', `${field}.url`, true)!;
    const parsed = URL.canParse(url) ? new URL(url) : undefined;
    if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
      reader.fail(map.get('url', true) as Node, `${field}.url`, `must be an http or https URL (got ${url})`);
    server = {
      kind: 'http',
      url,
      headers: readHeaders(reader, map, `${field}.headers`, parsed, context.allowedKeyHosts) ?? {},
    };
  } else {
    const args =
      reader.stringList(map, 'args', `${field}.args`, 'arguments', (text) =>
        text.includes('\0') ? 'must not hold a NUL character' : undefined,
      ) ?? [];
    const cwd = readWorkingDirectory(reader, map, `${field}.cwd`, context);
    const env = readEnvEntries(reader, map, `${field}.env`) ?? [];
    if (target === 'package') {
      const name = reader.string(map, 'package', `${field}.package`, true)!;
      const bin = packageBin(
        reader,
        map.get('package', true) as Node,
        `${field}.package`,
        name,
        context.directory,
      );
      server = { kind: 'stdio', command: process.execPath, args: [bin, ...args], cwd, env, package: name };
    } else {
      const command = reader.string(map, 'command', `${field}.command`, true)!;
      if (command.includes('\0') || basename(command) === '') {
        reader.fail(
          map.get('command', true) as Node,
          `${field}.command`,
          'must name a program, such as my-server or ./bin/server',
        );
      }
      server = { kind: 'stdio', command, args, cwd, env };
    }
  }
  const entry: McpEntry = { kind: 'mcp', field, server };
  const name = reader.string(map, 'name', `${field}.name`, false);
  if (name !== undefined) entry.name = name;
  const prefix = reader.string(map, 'prefix', `${field}.prefix`, false);
  if (prefix !== undefined) {
    if (!PREFIX.test(prefix))
      reader.fail(
        map.get('prefix', true) as Node,
        `${field}.prefix`,
        `must be 1 to 32 letters, digits, "_" or "-" (got ${JSON.stringify(prefix)})`,
      );
    entry.prefix = prefix;
  }
  const timeoutMs = reader.integer(map, 'timeoutMs', `${field}.timeoutMs`, 1, MAX_TIMER_MS);
  if (timeoutMs !== undefined) entry.timeoutMs = timeoutMs;
  const connectTimeoutMs = reader.integer(
    map,
    'connectTimeoutMs',
    `${field}.connectTimeoutMs`,
    1,
    MAX_TIMER_MS,
  );
  if (connectTimeoutMs !== undefined) entry.connectTimeoutMs = connectTimeoutMs;
  const approval = reader.boolean(map, 'destructiveNeedsApproval', `${field}.destructiveNeedsApproval`);
  if (approval !== undefined) entry.destructiveNeedsApproval = approval;
  const include = reader.stringList(
    map,
    'include',
    `${field}.include`,
    'tool names as the server lists them',
  );
  if (include !== undefined) entry.include = include;
  const exclude = reader.stringList(
    map,
    'exclude',
    `${field}.exclude`,
    'tool names as the server lists them',
  );
  if (exclude !== undefined) entry.exclude = exclude;
  return entry;
}

/**
 * `mcpTools`' options for an entry: a server run by keel gets the variables its `env` names, from `environment`; a
 * server over HTTP gets its headers, secrets from `environment` (an unset one is refused where `locate` says).
 */
export function mcpToolsOptions(
  entry: McpEntry,
  environment: NodeJS.ProcessEnv,
  locate: (header: string) => { location: string; field: string; file: string },
): McpToolsOptions {
  const common = {
    ...(entry.name === undefined ? {} : { name: entry.name }),
    ...(entry.prefix === undefined ? {} : { prefix: entry.prefix }),
    ...(entry.timeoutMs === undefined ? {} : { timeoutMs: entry.timeoutMs }),
    ...(entry.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: entry.connectTimeoutMs }),
    ...(entry.destructiveNeedsApproval === undefined
      ? {}
      : { destructiveNeedsApproval: entry.destructiveNeedsApproval }),
    ...(entry.include === undefined ? {} : { include: entry.include }),
    ...(entry.exclude === undefined ? {} : { exclude: entry.exclude }),
  };
  const { server } = entry;
  if (server.kind === 'http')
    return { ...common, url: server.url, headers: headerValuesOf(server.headers, environment, locate) };
  return {
    ...common,
    command: server.command,
    args: server.args,
    cwd: server.cwd,
    env: environmentOf(server.env, environment),
  };
}

/**
 * The program file of an npm package's bin, looked up from the agent file's directory, then from keel's own
 * installation (so that the servers keel depends on run offline, without npx).
 */
function packageBin(reader: FieldReader, node: Node, field: string, name: string, directory: string): string {
  if (!PACKAGE_NAME.test(name))
    reader.fail(node, field, `must be an npm package name (got ${JSON.stringify(name)})`);
  let manifestPath: string | undefined;
  for (const resolver of [createRequire(join(directory, 'agent.js')), require]) {
    try {
      manifestPath = resolver.resolve(`${name}/package.json`);
      break;
    } catch {
      // Not installed there: try the next place.
    }
  }
  if (manifestPath === undefined) {
    return reader.fail(
      node,
      field,
      `names ${name}, which is installed neither below ${directory} nor with keel`,
      `Install it (npm install ${name}), or run it with command: and args:`,
    );
  }
  let bin: unknown;
  try {
    bin = (JSON.parse(readFileSync(manifestPath, 'utf8')) as { bin?: unknown }).bin;
  } catch (error) {
    return reader.fail(
      node,
      field,
      `names ${name}, whose package.json cannot be read: ${(error as Error).message}`,
    );
  }
  const unscoped = name.slice(name.indexOf('/') + 1);
  const bins =
    typeof bin === 'string' ? { [unscoped]: bin } : typeof bin === 'object' && bin !== null ? bin : {};
  const entries = Object.entries(bins as Record<string, unknown>).filter(
    (entry): entry is [string, string] => typeof entry[1] === 'string',
  );
  const chosen = entries.length === 1 ? entries[0] : entries.find(([binName]) => binName === unscoped);
  if (chosen === undefined) {
    return reader.fail(
      node,
      field,
      entries.length === 0
        ? `names ${name}, which has no program (no bin in its package.json)`
        : `names ${name}, which has several programs (${entries.map(([binName]) => binName).join(', ')}): run one with command: and args:`,
    );
  }
  return resolve(dirname(manifestPath), chosen[1]);
}

// The loader's field list, for the agent-file reference (fields.ts).
export { FIELDS };
