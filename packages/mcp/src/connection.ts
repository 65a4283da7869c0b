import type { JsonValue } from '@keel/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { serverEnvironment } from './environment.js';
import { brief, unreachable } from './errors.js';
import type { McpTarget } from './options.js';
import { ChildProcessTransport } from './stdio-transport.js';

/** How keel introduces itself in the MCP handshake. */
const CLIENT_INFO = { name: 'keel', version: '0.1.0' } as const;
/** Statuses with which a server that only speaks the older SSE transport answers a Streamable HTTP request. */
const SSE_FALLBACK_STATUSES = new Set([400, 404, 405]);
/** Transport errors that mean the server's event stream is gone, so no answer can arrive on it any more. */
const STREAM_LOST =
  /SSE stream disconnected|Maximum reconnection attempts|Failed to reconnect|^SSE error|terminated/;
const STDERR_LINES_SHOWN = 5;
/** Longest a closing connection waits for messages still being sent, and for the server to end its session. */
const FLUSH_MS = 1_000;

/** Which wire a connection speaks. */
export type McpTransportKind = 'stdio' | 'streamable-http' | 'sse';

/** What a connection reports to its toolset. */
export interface ConnectionEvents {
  /** The connection ended without `close()` being called: the server exited, or its stream broke. */
  onLost(connection: ServerConnection): void;
  /** The server said its tool list changed (`notifications/tools/list_changed`). */
  onToolsChanged(connection: ServerConnection): void;
}

/** One live MCP session with a server, on the SDK's `Client`. */
export interface ServerConnection {
  readonly client: Client;
  readonly transport: McpTransportKind;
  /** The stdio server's process id. */
  readonly pid: number | undefined;
  /** True once the connection has ended, for whatever reason. */
  readonly closed: boolean;
  /** Ends the session (and a stdio server's process group); resolves when a stdio server has exited. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts (stdio) or reaches (HTTP) the server and completes the MCP handshake within `timeoutMs`. Over HTTP with
 * `transport: 'auto'`, a server that refuses Streamable HTTP with 400, 404 or 405 is tried again over SSE. Fails with
 * `tool.unavailable` (`data.phase: 'connect'`), the stdio server's last stderr lines in the message.
 */
export async function openConnection(
  server: string,
  target: McpTarget,
  timeoutMs: number,
  events: ConnectionEvents,
): Promise<ServerConnection> {
  if (target.kind === 'stdio') {
    const transport = new ChildProcessTransport({ ...target, env: serverEnvironment(target.env) });
    return handshake(server, transport, 'stdio', timeoutMs, events, () => stderrLines(transport.stderrTail));
  }
  const init = { headers: { ...target.headers } };
  if (target.transport !== 'sse') {
    try {
      const transport = new StreamableHTTPClientTransport(target.url, {
        requestInit: init,
        // keel decides about reconnecting (on the next call, behind the breaker); the SDK's own retries are off.
        reconnectionOptions: {
          maxRetries: 0,
          initialReconnectionDelay: 1_000,
          maxReconnectionDelay: 1_000,
          reconnectionDelayGrowFactor: 1,
        },
      });
      return await handshake(server, transport, 'streamable-http', timeoutMs, events);
    } catch (error) {
      const status = (error as { data?: { status?: JsonValue } }).data?.status;
      if (
        target.transport === 'streamable-http' ||
        typeof status !== 'number' ||
        !SSE_FALLBACK_STATUSES.has(status)
      )
        throw error;
    }
  }
  return handshake(
    server,
    new SSEClientTransport(target.url, { requestInit: init }),
    'sse',
    timeoutMs,
    events,
  );
}

async function handshake(
  server: string,
  transport: Transport & { readonly pid?: number },
  kind: McpTransportKind,
  timeoutMs: number,
  events: ConnectionEvents,
  detail?: () => string,
): Promise<ServerConnection> {
  const connection = new Connection(new Client(CLIENT_INFO, { capabilities: {} }), transport, kind, events);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no MCP handshake within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    // The SDK times the initialize request, but not the transport's start (an SSE server that never sends its
    // endpoint), so the whole handshake races one deadline.
    await Promise.race([connection.client.connect(transport, { timeout: timeoutMs }), deadline]);
    deferResponses(transport);
    return connection;
  } catch (error) {
    await connection.close();
    const status = httpStatusOf(error);
    throw unreachable(
      server,
      error,
      { phase: 'connect', transport: kind, ...(status === undefined ? {} : { status }) },
      detail?.(),
    );
  } finally {
    clearTimeout(timer);
  }
}

class Connection implements ServerConnection {
  readonly client: Client;
  readonly transport: McpTransportKind;
  private readonly raw: Transport & { readonly pid?: number };
  private readonly sending = new Set<Promise<void>>();
  private ended = false;
  private closing: Promise<void> | undefined;

  constructor(
    client: Client,
    raw: Transport & { readonly pid?: number },
    kind: McpTransportKind,
    events: ConnectionEvents,
  ) {
    this.client = client;
    this.raw = raw;
    this.transport = kind;
    // Messages still being sent (the cancellations of a closing toolset) go out before the connection ends.
    const send = raw.send.bind(raw);
    raw.send = (message, options) => {
      const sending = send(message, options);
      this.sending.add(sending);
      const forget = () => this.sending.delete(sending);
      sending.then(forget, forget);
      return sending;
    };
    client.onclose = () => {
      if (this.ended) return;
      this.ended = true;
      events.onLost(this);
    };
    client.onerror = (error) => {
      if (kind !== 'stdio' && STREAM_LOST.test(brief(error))) void this.close(true);
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => events.onToolsChanged(this));
  }

  get pid(): number | undefined {
    return this.raw.pid;
  }

  get closed(): boolean {
    return this.ended;
  }

  close(lost = false): Promise<void> {
    // Closed by keel, the connection is not reported lost; closed because its stream broke, it is (via onclose).
    const orderly = !this.ended && !lost;
    if (!lost) this.ended = true;
    this.closing ??= this.shutdown(orderly);
    return this.closing;
  }

  private async shutdown(orderly: boolean): Promise<void> {
    if (orderly) {
      await settledWithin([...this.sending], FLUSH_MS);
      // Streamable HTTP asks clients to end their session with a DELETE; a server that does not answer is not waited for.
      if (this.raw instanceof StreamableHTTPClientTransport && this.raw.sessionId !== undefined)
        await settledWithin([this.raw.terminateSession()], FLUSH_MS);
    }
    await this.raw.close().catch(() => undefined);
  }
}

/** Resolves when every promise has settled, or after `milliseconds`, whichever comes first. */
function settledWithin(promises: readonly Promise<unknown>[], milliseconds: number): Promise<void> {
  if (promises.length === 0) return Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    Promise.allSettled(promises).then(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, milliseconds);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * The SDK runs notification handlers a microtask late but settles a request as soon as its response is read, and
 * forgets the request's progress handler then: the last progress notification, read in the same chunk as the
 * response, would be dropped. A response read right after a notification is therefore delivered a microtask late
 * too, which keeps the order the server sent; other responses go through at once (deferring every one costs a
 * plain call tens of microseconds).
 */
function deferResponses(transport: Transport): void {
  const deliver = transport.onmessage;
  if (deliver === undefined) return;
  let notificationPending = false;
  const settled = () => {
    notificationPending = false;
  };
  transport.onmessage = (message, extra) => {
    const response = 'id' in message && ('result' in message || 'error' in message);
    if (response && notificationPending) queueMicrotask(() => deliver(message, extra));
    else deliver(message, extra);
    if (!response && !('id' in message) && !notificationPending) {
      notificationPending = true;
      queueMicrotask(settled);
    }
  };
}

function stderrLines(tail: string): string {
  const lines = tail.trimEnd().split('\n').slice(-STDERR_LINES_SHOWN);
  return lines.length === 0 || lines[0] === '' ? '' : `server stderr (last lines):\n${lines.join('\n')}`;
}

function httpStatusOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error &&
    error.message.startsWith('Streamable HTTP error') &&
    typeof code === 'number'
    ? code
    : undefined;
}
