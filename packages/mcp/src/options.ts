import { basename } from 'node:path';
import type { CircuitBreakerOptions, Clock, ToolContext } from '@keel/core';
import {
  optionError,
  rejectUnknownOptions,
  requireOptionsObject,
  TOOL_NAME_PATTERN,
} from '@keel/core/adapter';
import type { CallToolResult, Tool as McpToolDefinition } from '@modelcontextprotocol/sdk/types.js';

/** A progress notification the server sent about a running call, with the keel call it belongs to. */
export interface McpProgressEvent {
  /** The server's name (the `name` option). */
  readonly server: string;
  /** The keel tool's name (prefix included). */
  readonly toolName: string;
  /** The tool's name on the server. */
  readonly mcpToolName: string;
  /** Progress so far; increases with each notification. */
  readonly progress: number;
  /** The total, when the server knows it. */
  readonly total?: number;
  /** A human-readable note, when the server sent one. */
  readonly message?: string;
  readonly runId: string;
  readonly step: number;
  readonly callIndex: number;
  readonly idempotencyKey: string;
}

/** Breaker options the toolset passes on to its breaker (it sets `name`, `clock` and `isFailure` itself). */
export type McpBreakerOptions = Omit<CircuitBreakerOptions, 'name' | 'clock' | 'isFailure'>;

/** Options every MCP toolset takes, whatever its transport. */
export interface McpCommonOptions {
  /**
   * Names the server in errors, progress events and the breaker. Defaults to `prefix` when set, else the command's
   * base name (stdio) or the URL's host (HTTP).
   */
  name?: string;
  /**
   * Put before every tool name with an underscore (`fs` gives `fs_read_file`), so that two servers cannot offer the
   * model the same name. 1 to 32 letters, digits, `_` or `-`. Defaults to none.
   */
  prefix?: string;
  /** Longest one tool call may take, in milliseconds (`tool.timeout`). Defaults to 60_000. */
  timeoutMs?: number;
  /**
   * Whether each progress notification restarts the `timeoutMs` clock (a long job that keeps reporting progress is
   * not cut off), up to `maxTotalTimeoutMs`. Defaults to false.
   */
  resetTimeoutOnProgress?: boolean;
  /** With `resetTimeoutOnProgress`: the longest a call may take in all, in milliseconds. Defaults to 600_000. */
  maxTotalTimeoutMs?: number;
  /** Longest starting the server and the MCP handshake may take, in milliseconds (`tool.unavailable`). Defaults to 10_000. */
  connectTimeoutMs?: number;
  /**
   * Whether tools the server marks destructive need a human's approval before each call (keel's `needsApproval`).
   * Per the MCP specification, a tool is destructive unless it says `readOnlyHint: true` or `destructiveHint: false`.
   * Defaults to false.
   */
  destructiveNeedsApproval?: boolean;
  /** Offer only these tools (names as the server lists them). Defaults to every tool. */
  include?: readonly string[];
  /** Never offer these tools (names as the server lists them). Defaults to none. */
  exclude?: readonly string[];
  /**
   * The breaker in front of this server: server failures (`tool.unavailable`, `tool.timeout`) open it, and while it
   * is open calls fail at once with `tool.unavailable`; each open period grows, so reconnects back off. Opening it
   * also drops the connection (a hung server is stopped). `false` for none. Defaults to
   * `{ strategy: consecutive({ threshold: 3 }), halfOpenAfterMs: { initialMs: 1_000, factor: 2, maxMs: 60_000 } }`,
   * with probes allowed `connectTimeoutMs + timeoutMs`.
   */
  breaker?: McpBreakerOptions | false;
  /**
   * Receives the server's progress notifications about running calls. When set, each call asks the server for
   * progress. Defaults to none (the server is not asked).
   */
  onProgress?: (event: McpProgressEvent) => void;
  /**
   * Turns a successful `tools/call` result into the tool's output. Defaults to `structuredContent` when present,
   * else the text of the content (one string), else the content blocks with binary data left out.
   */
  mapResult?: (result: CallToolResult, tool: McpToolDefinition) => unknown;
  /**
   * Fields added to the `_meta` of each `tools/call` request, from the call's context: W3C trace context, say, which
   * the OpenTelemetry MCP conventions carry as `_meta.traceparent` and `_meta.tracestate` (with `@keel/otel`:
   * `meta: (context) => tracing.traceHeaders(context)`). Defaults to none.
   */
  meta?: (context: ToolContext) => Record<string, string>;
  /** Closes the toolset when it aborts: pass a run's or the process's signal to tie the server's life to it. Defaults to none. */
  signal?: AbortSignal;
  /** Where the breaker's time comes from. Defaults to the system clock. */
  clock?: Clock;
}

/** A server started as a child process, spoken to over its stdin and stdout. */
export interface McpStdioOptions extends McpCommonOptions {
  /** The program to run (no shell is involved). Required. */
  command: string;
  /** Its arguments. Defaults to none. */
  args?: readonly string[];
  /**
   * Environment variables for the server, added to a minimal safe set (`HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`,
   * `USER` on POSIX, from the MCP SDK's `getDefaultEnvironment`). Nothing else of this process's environment is
   * passed on, so secrets stay here unless you pass them. Defaults to none.
   */
  env?: Readonly<Record<string, string>>;
  /** The server's working directory. Defaults to this process's. */
  cwd?: string;
  /** Receives the server's stderr as text. Defaults to none (the last 8 KiB are kept for error messages). */
  onStderr?: (text: string) => void;
  /**
   * On close, how long the server gets to exit after its stdin ends, and again after SIGTERM, before SIGKILL, in
   * milliseconds. Defaults to 2_000.
   */
  closeGraceMs?: number;
  /**
   * Whether the server runs in a process group of its own (POSIX; Node.js gives it a session of its own too), so that
   * closing the toolset, or this process exiting, ends whatever the server started (a server run through `npx` or a
   * shell). A terminal's Ctrl-C then reaches the server only through this process. `false` leaves the server in this
   * process's group: only the server itself is signalled. Defaults to true.
   */
  processGroup?: boolean;
}

/** Which HTTP transport to speak. */
export type McpHttpTransport = 'auto' | 'streamable-http' | 'sse';

/** A server reached over HTTP. */
export interface McpHttpOptions extends McpCommonOptions {
  /** The server's MCP endpoint, such as `https://example.com/mcp`. Required. */
  url: string | URL;
  /** Headers sent with every request, such as `{ authorization: 'Bearer ...' }`. Defaults to none. */
  headers?: Readonly<Record<string, string>>;
  /**
   * `streamable-http` or the older `sse` transport; `auto` tries Streamable HTTP and falls back to SSE when the
   * server answers the first request with 400, 404 or 405, as the MCP specification advises. Defaults to `auto`.
   */
  transport?: McpHttpTransport;
}

/** Options of `mcpTools`: a command (stdio) or a URL (HTTP). */
export type McpToolsOptions = McpStdioOptions | McpHttpOptions;

/** How to reach the server, checked. */
export type McpTarget =
  | {
      readonly kind: 'stdio';
      readonly command: string;
      readonly args: readonly string[];
      readonly env: Readonly<Record<string, string>>;
      readonly cwd: string | undefined;
      readonly onStderr: ((text: string) => void) | undefined;
      readonly closeGraceMs: number;
      readonly processGroup: boolean;
    }
  | {
      readonly kind: 'http';
      readonly url: URL;
      readonly headers: Readonly<Record<string, string>>;
      readonly transport: McpHttpTransport;
    };

/** The options, checked, with their defaults filled in. */
export interface ResolvedMcpOptions {
  readonly name: string;
  readonly prefix: string | undefined;
  readonly target: McpTarget;
  readonly timeoutMs: number;
  readonly resetTimeoutOnProgress: boolean;
  readonly maxTotalTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly destructiveNeedsApproval: boolean;
  readonly include: ReadonlySet<string> | undefined;
  readonly exclude: ReadonlySet<string>;
  readonly breaker: McpBreakerOptions | false;
  readonly onProgress: ((event: McpProgressEvent) => void) | undefined;
  readonly mapResult: ((result: CallToolResult, tool: McpToolDefinition) => unknown) | undefined;
  readonly meta: ((context: ToolContext) => Record<string, string>) | undefined;
  readonly signal: AbortSignal | undefined;
  readonly clock: Clock | undefined;
}

const FACTORY = 'mcpTools';
const COMMON = [
  'name',
  'prefix',
  'timeoutMs',
  'resetTimeoutOnProgress',
  'maxTotalTimeoutMs',
  'connectTimeoutMs',
  'destructiveNeedsApproval',
  'include',
  'exclude',
  'breaker',
  'onProgress',
  'mapResult',
  'meta',
  'signal',
  'clock',
];
const STDIO_OPTIONS = [
  ...COMMON,
  'command',
  'args',
  'env',
  'cwd',
  'onStderr',
  'closeGraceMs',
  'processGroup',
];
const HTTP_OPTIONS = [...COMMON, 'url', 'headers', 'transport'];
const PREFIX_PATTERN = /^[a-zA-Z0-9_-]{1,32}$/;
/** The longest timer Node.js honours (about 24.8 days); longer ones fire at once. */
const MAX_TIMER_MS = 2_147_483_647;
const ENV_NAME_PATTERN = /^[^=\0]+$/;

/** Checks `mcpTools` options; anything wrong throws `config.invalid` naming the option and what would be accepted. */
export function resolveMcpOptions(options: McpToolsOptions): ResolvedMcpOptions {
  requireOptionsObject(options, {
    where: FACTORY,
    example: "{ command: 'node', args: ['server.js'] } or { url: 'http://...' }",
  });
  const raw = options as unknown as Record<string, unknown>;
  const hasCommand = raw.command !== undefined;
  const hasUrl = raw.url !== undefined;
  if (hasCommand === hasUrl) {
    fail(
      hasCommand ? 'url' : 'command',
      hasCommand
        ? 'give either command (a server over stdio) or url (a server over HTTP), not both'
        : 'needs command (a server over stdio, such as { command: "node", args: ["server.js"] }) or url (a server over HTTP)',
    );
  }
  rejectUnknownOptions(options, hasCommand ? STDIO_OPTIONS : HTTP_OPTIONS, { where: FACTORY });
  const target = hasCommand ? stdioTarget(raw) : httpTarget(raw);

  const prefix = raw.prefix;
  if (prefix !== undefined && (typeof prefix !== 'string' || !PREFIX_PATTERN.test(prefix)))
    fail('prefix', `prefix must be 1 to 32 letters, digits, "_" or "-", got ${show(prefix)}`);
  const name = raw.name ?? prefix ?? defaultName(target);
  if (typeof name !== 'string' || name.trim() === '')
    fail('name', `name must be a non-empty string, got ${show(name)}`);

  const timeoutMs = milliseconds(raw.timeoutMs, 'timeoutMs', 60_000);
  const maxTotalTimeoutMs = milliseconds(raw.maxTotalTimeoutMs, 'maxTotalTimeoutMs', 600_000);
  const resetTimeoutOnProgress = flag(raw.resetTimeoutOnProgress, 'resetTimeoutOnProgress');
  if (resetTimeoutOnProgress && maxTotalTimeoutMs < timeoutMs)
    fail('maxTotalTimeoutMs', 'maxTotalTimeoutMs must be at least timeoutMs');
  const breaker = raw.breaker ?? {};
  if (breaker !== false && (typeof breaker !== 'object' || breaker === null || Array.isArray(breaker)))
    fail('breaker', `breaker must be breaker options or false, got ${show(breaker)}`);
  const clock = raw.clock as Clock | undefined;
  if (
    clock !== undefined &&
    (typeof clock?.now !== 'function' ||
      typeof clock.setTimeout !== 'function' ||
      typeof clock.clearTimeout !== 'function')
  ) {
    fail('clock', 'clock must be a Clock with now(), setTimeout() and clearTimeout()');
  }
  const signal = raw.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal))
    fail('signal', `signal must be an AbortSignal, got ${show(signal)}`);

  return {
    name: name.trim(),
    prefix: prefix as string | undefined,
    target,
    timeoutMs,
    resetTimeoutOnProgress,
    maxTotalTimeoutMs,
    connectTimeoutMs: milliseconds(raw.connectTimeoutMs, 'connectTimeoutMs', 10_000),
    destructiveNeedsApproval: flag(raw.destructiveNeedsApproval, 'destructiveNeedsApproval'),
    include: raw.include === undefined ? undefined : new Set(names(raw.include, 'include')),
    exclude: new Set(raw.exclude === undefined ? [] : names(raw.exclude, 'exclude')),
    breaker: breaker as McpBreakerOptions | false,
    onProgress: optionalFunction(raw.onProgress, 'onProgress', '(event) => void'),
    mapResult: optionalFunction(raw.mapResult, 'mapResult', '(result, tool) => output'),
    meta: optionalFunction(raw.meta, 'meta', '(context) => ({ traceparent })'),
    signal: signal as AbortSignal | undefined,
    clock,
  };
}

function stdioTarget(raw: Record<string, unknown>): McpTarget {
  const { command } = raw;
  if (typeof command !== 'string' || command.trim() === '' || command.includes('\0'))
    fail('command', `command must be a program name or path, got ${show(command)}`);
  const args = raw.args ?? [];
  if (!Array.isArray(args) || args.some((item) => typeof item !== 'string' || item.includes('\0')))
    fail('args', 'args must be an array of strings (each one argument, no shell involved)');
  const env = raw.env ?? {};
  if (typeof env !== 'object' || env === null || Array.isArray(env))
    fail('env', `env must be an object of strings, got ${show(env)}`);
  for (const [key, value] of Object.entries(env)) {
    if (!ENV_NAME_PATTERN.test(key))
      fail('env', `env name ${JSON.stringify(key)} is not a valid variable name`);
    if (typeof value !== 'string' || value.includes('\0'))
      fail('env', `env.${key} must be a string without NUL bytes`);
  }
  const { cwd } = raw;
  if (cwd !== undefined && (typeof cwd !== 'string' || cwd === '' || cwd.includes('\0')))
    fail('cwd', `cwd must be a directory path, got ${show(cwd)}`);
  return {
    kind: 'stdio',
    command,
    args: [...(args as string[])],
    env: { ...(env as Record<string, string>) },
    cwd: cwd as string | undefined,
    onStderr: optionalFunction(raw.onStderr, 'onStderr', '(text) => void'),
    closeGraceMs: milliseconds(raw.closeGraceMs, 'closeGraceMs', 2_000),
    processGroup: raw.processGroup === undefined ? true : flag(raw.processGroup, 'processGroup'),
  };
}

function httpTarget(raw: Record<string, unknown>): McpTarget {
  let url: URL | undefined;
  try {
    url = new URL(raw.url as string | URL);
  } catch {
    fail(
      'url',
      `url must be an absolute http(s) URL such as http://127.0.0.1:3001/mcp, got ${show(raw.url)}`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    fail('url', `url must use http or https, got ${url.protocol}`);
  const headers = raw.headers ?? {};
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers))
    fail('headers', `headers must be an object of strings, got ${show(headers)}`);
  for (const [key, value] of Object.entries(headers)) {
    if (typeof value !== 'string') fail('headers', `header ${key} must be a string`);
  }
  const transport = raw.transport ?? 'auto';
  if (transport !== 'auto' && transport !== 'streamable-http' && transport !== 'sse')
    fail('transport', `transport must be 'auto', 'streamable-http' or 'sse', got ${show(transport)}`);
  return { kind: 'http', url, headers: { ...(headers as Record<string, string>) }, transport };
}

function defaultName(target: McpTarget): string {
  const name = target.kind === 'stdio' ? basename(target.command) : target.url.host;
  // A name used in tool errors and breaker names reads best without punctuation the model might trip on.
  return TOOL_NAME_PATTERN.test(name) ? name : name.replace(/[^a-zA-Z0-9_-]/g, '_');
}

function milliseconds(value: unknown, option: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value > 0) || value > MAX_TIMER_MS)
    fail(option, `${option} must be milliseconds above 0 and at most ${MAX_TIMER_MS}, got ${show(value)}`);
  return value;
}

function flag(value: unknown, option: string): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') fail(option, `${option} must be true or false, got ${show(value)}`);
  return value;
}

function names(value: unknown, option: string): string[] {
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string' || item === ''))
    fail(option, `${option} must be an array of tool names as the server lists them`);
  return value as string[];
}

function optionalFunction<F>(value: unknown, option: string, signature: string): F | undefined {
  if (value !== undefined && typeof value !== 'function')
    fail(option, `${option} must be a function ${signature}, got ${show(value)}`);
  return value as F | undefined;
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || typeof value !== 'object') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}

/** A `config.invalid` whose data is the kit's `{ where, option, path }`, so that an agent file can locate the field. */
function fail(option: string, message: string): never {
  throw optionError({ where: FACTORY, option, message });
}
