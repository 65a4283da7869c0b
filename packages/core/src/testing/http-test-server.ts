import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as the test server received it, body read in full. */
export interface RecordedRequest {
  method: string;
  /** The path and query, such as `/v1/chat/completions`. */
  url: string;
  /** Header names in lower case. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The raw body text. */
  body: string;
  /** The body parsed as JSON; throws when it is not JSON. */
  json(): unknown;
  /** 1 for the first request the server received, 2 for the second, ... */
  index: number;
  /**
   * Settles when the connection closes before the response ended: resolves `true` then, `false` when the response
   * ended normally. This is how a test sees that the client gave up (an abort) rather than guessing with a timer.
   */
  closedEarly: Promise<boolean>;
}

/** Answers one request. `response` is Node's own, so a handler can stall, stream, or destroy the socket. */
export type TestRequestHandler = (
  request: RecordedRequest,
  response: ServerResponse,
  raw: IncomingMessage,
) => void | Promise<void>;

/** A running HTTP server on 127.0.0.1, for tests that speak a wire format over real sockets. */
export interface HttpTestServer {
  /** The base URL, such as `http://127.0.0.1:43121`, without a trailing slash. */
  readonly url: string;
  readonly port: number;
  /** Every request received so far, in order. */
  readonly requests: readonly RecordedRequest[];
  /** Stops accepting connections, destroys open ones, and resolves once the server is closed. */
  close(): Promise<void>;
}

/**
 * Starts an HTTP server on 127.0.0.1 at an ephemeral port. The handler sees each request after its body has been
 * read. A handler that throws answers 500 with the error message, so a broken test handler is visible.
 *
 * @example
 *   const server = await startHttpTestServer((request, response) => sendJson(response, 200, { ok: true }));
 *   try { await fetch(`${server.url}/ping`); } finally { await server.close(); }
 */
export async function startHttpTestServer(handler: TestRequestHandler): Promise<HttpTestServer> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((raw, response) => {
    const chunks: Buffer[] = [];
    raw.on('data', (chunk: Buffer) => chunks.push(chunk));
    raw.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const closedEarly = new Promise<boolean>((resolve) => {
        response.on('close', () => resolve(!response.writableEnded));
      });
      const request: RecordedRequest = {
        method: raw.method ?? 'GET',
        url: raw.url ?? '/',
        headers: raw.headers,
        body,
        json: () => JSON.parse(body),
        index: requests.length + 1,
        closedEarly,
      };
      requests.push(request);
      Promise.resolve()
        .then(() => handler(request, response, raw))
        .catch((error: unknown) => {
          if (response.headersSent) {
            response.destroy();
            return;
          }
          response.writeHead(500, { 'content-type': 'text/plain' });
          response.end(`test handler failed: ${error instanceof Error ? error.message : String(error)}`);
        });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** Answers with a JSON body. */
export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

/** One server-sent event. `data` that is not a string is sent as JSON. */
export interface ServerSentEvent {
  event?: string;
  data: unknown;
}

/** Starts a `text/event-stream` response; write events with {@link writeSse}. */
export function startSse(response: ServerResponse, headers: Record<string, string> = {}): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
  // Sends the headers now, so the client's fetch resolves before the first event.
  response.flushHeaders();
}

/** Writes server-sent events to a response started with {@link startSse}. */
export function writeSse(response: ServerResponse, events: readonly ServerSentEvent[]): void {
  for (const event of events) {
    const data = typeof event.data === 'string' ? event.data : JSON.stringify(event.data);
    const name = event.event === undefined ? '' : `event: ${event.event}\n`;
    response.write(`${name}data: ${data}\n\n`);
  }
}

/** The port of a server that was started and closed again: connecting to it is refused. */
export async function closedPort(): Promise<number> {
  const server = await startHttpTestServer(() => undefined);
  await server.close();
  return server.port;
}
