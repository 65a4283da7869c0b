import {
  type CircuitBreaker,
  circuitBreaker,
  consecutive,
  type Disposable,
  KeelError,
  type ToolContext,
  type ToolProgress,
  type ToolSource,
} from '@keel/core';
import { Emitter, isControlSignal, type SecretValueRedactor, secretValueRedactor } from '@keel/core/adapter';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, Tool as McpToolDefinition } from '@modelcontextprotocol/sdk/types.js';
import { type McpTransportKind, openConnection, type ServerConnection } from './connection.js';
import { breakerOpen, type CallSite, callFailure, closedDuringCall, unreachable } from './errors.js';
import { type McpCallTarget, type McpTool, mcpTool } from './mcp-tool.js';
import { type McpToolsOptions, type ResolvedMcpOptions, resolveMcpOptions } from './options.js';
import { toolOutput } from './result.js';
import { sentSecrets } from './sent-secrets.js';
import { keelToolNames } from './tool-names.js';

/** Where a toolset's connection stands. */
export type McpToolsetState = 'idle' | 'connecting' | 'connected' | 'closed';

/**
 * The tools of one MCP server, and the connection to it. Build one with {@link mcpTools}. It is a core `ToolSource`:
 * pass it in `agent({ tools: [toolset] })` and the agent connects at its first step and offers the server's current
 * tools at every step, as `tools/list_changed` updates them.
 */
export interface McpToolset extends ToolSource {
  /** The server's name (the `name` option). */
  readonly name: string;
  readonly state: McpToolsetState;
  /** The transport of the live connection, if any. */
  readonly transport: McpTransportKind | undefined;
  /** The stdio server's process id while it runs. */
  readonly pid: number | undefined;
  /** The tools as last listed (empty before the first listing); kept up to date when the server's list changes. */
  readonly current: readonly McpTool[];
  /**
   * Moves whenever the tools change or a listing is due: before the first listing, when the server says its list
   * changed, after a reconnect, and when a listing changes the tools. An agent reads it before each model step.
   */
  readonly version: number;
  /** The breaker in front of the server, if any. */
  readonly breaker: CircuitBreaker | undefined;
  /** Connects now (the eager way) and lists the tools. Rejects with `tool.unavailable` if the server cannot be reached. */
  connect(): Promise<readonly McpTool[]>;
  /**
   * The current tools: connects and lists them on first use, and waits for a new listing when the server said its
   * list changed; otherwise answers at once, without reconnecting. Call it between steps to see new tools.
   */
  tools(): Promise<readonly McpTool[]>;
  /** Lists the tools again now. */
  refresh(): Promise<readonly McpTool[]>;
  /** Called with the new list whenever a listing changes it (a tool added, removed or redefined). */
  onToolsChanged(listener: (tools: readonly McpTool[]) => void): Disposable;
  /**
   * Cancels the calls in flight (the server is sent `notifications/cancelled` for each; they end `tool.unavailable`),
   * ends the session and, for stdio, the server's process group. Resolves when the server has exited. Idempotent.
   */
  close(): Promise<void>;
}

const MAX_LIST_PAGES = 100;

/**
 * Connects keel to a Model Context Protocol server, on the official MCP TypeScript SDK: over stdio for a `command`
 * (run in a process group of its own, with a minimal environment, never through a shell), or over Streamable HTTP
 * for a `url`, falling back to the older SSE transport when the server answers that way.
 *
 * Nothing starts until the first `tools()`, `connect()` or call. Each listed tool becomes a keel tool (see
 * `mcpTool`). Calls fail as data the model can act on: `isError` results with the server's text (`tool.failed`),
 * unknown tools (`tool.not_found`), invalid arguments (`tool.invalid_input`), protocol errors (`tool.failed`), and a
 * server that dies, closes its stream or cannot be reached (`tool.unavailable`), never a hang: every call has a
 * timeout (`tool.timeout`; the server is sent `notifications/cancelled`). A lost connection is made again on the
 * next call, behind a breaker per server whose open periods grow. Options are checked at once: anything wrong throws
 * `config.invalid`.
 *
 * @example
 *   const files = mcpTools({
 *     command: 'npx',
 *     args: ['-y', '@modelcontextprotocol/server-filesystem', './docs'],
 *     prefix: 'fs',
 *     timeoutMs: 10_000,
 *   });
 *   try {
 *     const assistant = agent({ model, tools: [files] }); // connected at the first step
 *     const result = await assistant.run('Summarise docs/intro.md', { signal });
 *   } finally {
 *     await files.close();
 *   }
 */
export function mcpTools(options: McpToolsOptions): McpToolset {
  return new Toolset(resolveMcpOptions(options));
}

class Toolset implements McpToolset {
  readonly name: string;
  readonly breaker: CircuitBreaker | undefined;
  private readonly options: ResolvedMcpOptions;
  /** Removes the secrets sent to the server (header and variable values) from its results and errors. */
  private readonly echoes: SecretValueRedactor;
  private connection: ServerConnection | undefined;
  private connecting: Promise<ServerConnection> | undefined;
  private listed: readonly McpTool[] = [];
  private everListed = false;
  private stale = false;
  private listVersion = 0;
  private listing: Promise<readonly McpTool[]> | undefined;
  private closing: Promise<void> | undefined;
  private readonly inFlight = new Set<AbortController>();
  /** Connections being closed after they were dropped; `close()` waits for them too. */
  private readonly draining = new Set<Promise<void>>();
  private readonly changes = new Emitter<readonly McpTool[]>();
  private readonly call = (target: McpCallTarget, input: Record<string, unknown>, context: ToolContext) =>
    this.callTool(target, input, context);
  private readonly closeOnAbort = () => void this.close();

  constructor(options: ResolvedMcpOptions) {
    this.options = options;
    this.echoes = secretValueRedactor(sentSecrets(options.target));
    this.name = options.name;
    this.breaker = options.breaker === false ? undefined : this.makeBreaker(options);
    if (options.signal?.aborted) this.closing = Promise.resolve();
    else options.signal?.addEventListener('abort', this.closeOnAbort, { once: true });
  }

  get state(): McpToolsetState {
    if (this.closing !== undefined) return 'closed';
    if (this.connection !== undefined && !this.connection.closed) return 'connected';
    return this.connecting === undefined ? 'idle' : 'connecting';
  }

  get transport(): McpTransportKind | undefined {
    return this.state === 'connected' ? this.connection?.transport : undefined;
  }

  get pid(): number | undefined {
    return this.state === 'connected' ? this.connection?.pid : undefined;
  }

  get current(): readonly McpTool[] {
    return this.listed;
  }

  get version(): number {
    return this.listVersion;
  }

  async connect(): Promise<readonly McpTool[]> {
    await this.acquire();
    if (this.everListed && !this.stale) return this.listed;
    return this.listing ?? this.refresh();
  }

  tools(): Promise<readonly McpTool[]> {
    if (this.closing !== undefined) return Promise.reject(this.closedError());
    if (this.everListed && !(this.stale && this.state === 'connected') && this.listing === undefined)
      return Promise.resolve(this.listed);
    return this.listing ?? this.refresh();
  }

  refresh(): Promise<readonly McpTool[]> {
    const listing = this.list().finally(() => {
      if (this.listing === listing) this.listing = undefined;
    });
    this.listing = listing;
    return listing;
  }

  onToolsChanged(listener: (tools: readonly McpTool[]) => void): Disposable {
    return this.changes.event(listener);
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.options.signal?.removeEventListener('abort', this.closeOnAbort);
    const reason = this.closedError();
    // Aborting makes the SDK send notifications/cancelled for each call; the connection waits for those to go out.
    for (const controller of this.inFlight) controller.abort(reason);
    const pending = this.connecting?.catch(() => undefined);
    const connection = this.connection;
    this.connection = undefined;
    await Promise.all([connection?.close(), pending, ...this.draining]);
  }

  private async list(): Promise<readonly McpTool[]> {
    const connection = await this.acquire();
    this.stale = false;
    const definitions: McpToolDefinition[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      let result: Awaited<ReturnType<typeof connection.client.listTools>>;
      try {
        result = await connection.client.listTools(cursor === undefined ? undefined : { cursor }, {
          timeout: this.options.timeoutMs,
        });
      } catch (error) {
        this.stale = true;
        throw this.echoes.error(unreachable(this.name, error, { phase: 'list' }));
      }
      definitions.push(...result.tools);
      cursor = result.nextCursor;
      if (cursor === undefined) break;
    }
    this.update(definitions);
    return this.listed;
  }

  /** Makes the listed definitions into tools, keeping the tool values whose definition did not change. */
  private update(definitions: readonly McpToolDefinition[]): void {
    const { include, exclude, prefix } = this.options;
    // Tools that must run as MCP tasks cannot be called with a plain tools/call.
    const offered = definitions.filter(
      (definition) =>
        (include === undefined || include.has(definition.name)) &&
        !exclude.has(definition.name) &&
        definition.execution?.taskSupport !== 'required',
    );
    const names = keelToolNames(
      offered.map((definition) => definition.name),
      prefix,
    );
    const previous = new Map(this.listed.map((tool) => [tool.name, tool]));
    let changed = !this.everListed || offered.length !== this.listed.length;
    const tools = offered.map((definition, index) => {
      const name = names[index]!;
      const existing = previous.get(name);
      if (existing !== undefined && sameDefinition(existing, definition)) return existing;
      changed = true;
      return mcpTool(definition, name, {
        server: this.name,
        timeoutMs: this.options.resetTimeoutOnProgress
          ? this.options.maxTotalTimeoutMs
          : this.options.timeoutMs,
        destructiveNeedsApproval: this.options.destructiveNeedsApproval,
        call: this.call,
      });
    });
    this.everListed = true;
    if (!changed && tools.every((tool, index) => tool === this.listed[index])) return;
    this.listed = Object.freeze(tools);
    this.listVersion++;
    this.changes.emit(this.listed);
  }

  private async callTool(
    target: McpCallTarget,
    input: Record<string, unknown>,
    context: ToolContext,
  ): Promise<unknown> {
    const breaker = this.breaker;
    try {
      if (breaker === undefined) return await this.callOnce(target, input, context);
      return await breaker.execute(() => this.callOnce(target, input, context), context.signal);
    } catch (error) {
      const { signal } = context;
      // The caller's own reason and control signals pass as they are; every failure of the server's loses the
      // secrets it was sent, whatever it echoed (a 401 text, a JSON-RPC error, its stderr).
      if ((signal.aborted && error === signal.reason) || isControlSignal(error)) throw error;
      if (KeelError.isInstance(error) && error.code === 'policy.circuit_open')
        throw this.echoes.error(breakerOpen(this.name, error));
      throw this.echoes.error(error);
    }
  }

  private async callOnce(
    { site, definition }: McpCallTarget,
    input: Record<string, unknown>,
    context: ToolContext,
  ): Promise<unknown> {
    const signal = context.signal;
    if (signal.aborted) throw signal.reason;
    let connection = this.connection;
    if (connection === undefined || connection.closed)
      connection = await whileNotAborted(this.acquire(), signal);
    const controller = new AbortController();
    const forward = () => controller.abort(signal.reason);
    signal.addEventListener('abort', forward, { once: true });
    this.inFlight.add(controller);
    try {
      const meta = this.options.meta?.(context);
      const result = await connection.client.callTool(
        { name: site.mcpToolName, arguments: input, ...(meta === undefined ? {} : { _meta: { ...meta } }) },
        undefined,
        this.requestOptions(controller.signal, site, context),
      );
      const map = this.options.mapResult;
      return this.echoes.value(
        toolOutput(
          result as CallToolResult,
          site,
          map === undefined ? undefined : (value) => map(value, definition),
        ),
      );
    } catch (thrown) {
      if (signal.aborted) throw signal.reason;
      if (controller.signal.aborted) throw closedDuringCall(site);
      const error = callFailure(thrown, site);
      if (error.code === 'tool.unavailable') this.drop(connection);
      else if (error.code === 'tool.not_found') this.toolsChanged(connection);
      throw error;
    } finally {
      signal.removeEventListener('abort', forward);
      this.inFlight.delete(controller);
    }
  }

  private requestOptions(signal: AbortSignal, site: CallSite, context: ToolContext): RequestOptions {
    const { timeoutMs, resetTimeoutOnProgress, maxTotalTimeoutMs, onProgress } = this.options;
    const options: RequestOptions = { signal, timeout: timeoutMs };
    if (resetTimeoutOnProgress) {
      options.resetTimeoutOnProgress = true;
      options.maxTotalTimeout = maxTotalTimeoutMs;
    }
    // Progress is asked for (a progress token sent) only when somebody listens: the run's events through
    // `reportProgress`, or `onProgress`; or when progress keeps the call alive.
    const report = context.reportProgress;
    if (onProgress === undefined && report === undefined && !resetTimeoutOnProgress) return options;
    options.onprogress = (notification) => {
      const progress: ToolProgress = {
        progress: notification.progress,
        ...(notification.total === undefined ? {} : { total: notification.total }),
        ...(notification.message === undefined ? {} : { message: this.echoes.text(notification.message) }),
      };
      try {
        report?.(progress);
        onProgress?.({
          server: this.name,
          toolName: site.toolName,
          mcpToolName: site.mcpToolName,
          ...progress,
          runId: context.runId,
          step: context.step,
          callIndex: context.callIndex,
          idempotencyKey: context.idempotencyKey,
        });
      } catch {
        // A listener's fault must not break the call it observes.
      }
    };
    return options;
  }

  private acquire(): Promise<ServerConnection> {
    if (this.closing !== undefined) return Promise.reject(this.closedError());
    const live = this.connection;
    if (live !== undefined && !live.closed) return Promise.resolve(live);
    if (this.connecting !== undefined) return this.connecting;
    const connecting = this.open().finally(() => {
      if (this.connecting === connecting) this.connecting = undefined;
    });
    this.connecting = connecting;
    return connecting;
  }

  private async open(): Promise<ServerConnection> {
    const connection = await openConnection(this.name, this.options.target, this.options.connectTimeoutMs, {
      onLost: (lost) => this.drop(lost),
      onToolsChanged: (changed) => this.toolsChanged(changed),
    }).catch((error: unknown) => {
      throw this.echoes.error(error);
    });
    if (this.closing !== undefined) {
      await connection.close();
      throw this.closedError();
    }
    // A new server process may offer other tools than the last one did.
    if (this.everListed) this.markStale();
    this.connection = connection;
    return connection;
  }

  /** The server's list changed: list again now, so that `current` is right before the next step. */
  private toolsChanged(connection: ServerConnection): void {
    if (connection !== this.connection || this.closing !== undefined) return;
    this.markStale();
    if (this.listing !== undefined) {
      // A listing in flight may predate the change: list once more after it.
      void this.listing.catch(() => undefined).then(() => this.stale && this.refreshInBackground());
      return;
    }
    this.refreshInBackground();
  }

  private markStale(): void {
    this.stale = true;
    this.listVersion++;
  }

  private refreshInBackground(): void {
    // A failed background listing leaves the list stale; the next tools() tries again and reports the failure.
    if (this.closing === undefined) this.refresh().catch(() => undefined);
  }

  private drop(connection: ServerConnection): void {
    if (this.connection === connection) this.connection = undefined;
    const closing = connection.close().finally(() => this.draining.delete(closing));
    this.draining.add(closing);
  }

  private makeBreaker(options: ResolvedMcpOptions): CircuitBreaker {
    const breaker = circuitBreaker({
      strategy: consecutive({ threshold: 3 }),
      halfOpenAfterMs: { initialMs: 1_000, factor: 2, maxMs: 60_000 },
      probeTimeoutMs:
        options.connectTimeoutMs +
        (options.resetTimeoutOnProgress ? options.maxTotalTimeoutMs : options.timeoutMs),
      ...(options.breaker || {}),
      name: `mcp:${options.name}`,
      clock: options.clock,
      isFailure: isServerFailure,
    });
    // An open breaker stops a hung or crash-looping server; the probe after the open period starts a fresh one.
    breaker.onBreak(() => {
      const connection = this.connection;
      if (connection !== undefined) this.drop(connection);
    });
    return breaker;
  }

  private closedError(): KeelError {
    return unreachable(this.name, undefined, { phase: 'closed' }, 'The toolset was closed.');
  }
}

/**
 * Failures that say the server is unhealthy; what the model or the tool got wrong does not count, and neither does a
 * call cut off because the toolset was closed.
 */
function isServerFailure(error: unknown): boolean {
  if (!KeelError.isInstance(error)) return false;
  if (error.code === 'tool.timeout') return true;
  return error.code === 'tool.unavailable' && error.data.phase !== 'closed';
}

function sameDefinition(tool: McpTool, definition: McpToolDefinition): boolean {
  return JSON.stringify(tool.mcp.definition) === JSON.stringify(definition);
}

/** `promise`, or the signal's reason as soon as it aborts. */
function whileNotAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', abort);
        reject(error);
      },
    );
  });
}
