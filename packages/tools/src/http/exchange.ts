import {
  type Agent as HttpAgent,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
} from 'node:http';
import { type Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { classify, KeelError } from '@keel/core';
import type { AddressPolicy } from './address-policy.js';
import { parseAddress } from './ip-address.js';
import { PLAIN_HEADERS } from './request-headers.js';

/** One HTTP exchange: a request, the redirects it leads to, and the final response. */
export interface ExchangeRequest {
  method: string;
  url: URL;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: Buffer | undefined;
  maxRedirects: number;
  maxResponseBytes: number;
  /** Aborts the exchange at once: the reason is what it rejects with. */
  signal: AbortSignal;
  agents: { readonly http: HttpAgent; readonly https: HttpsAgent };
  policy: AddressPolicy;
  /** Set on classified errors. */
  toolName: string;
}

/** The final response, its body read up to the cap. */
export interface ExchangeResponse {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Whether the body was longer than `maxResponseBytes` and cut there. */
  truncated: boolean;
  /** The URL that answered, after redirects. */
  url: URL;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Sends the request and follows redirects itself (at most `maxRedirects`), so that every hop goes through the
 * address policy again: an IP literal is checked here, a name by the agents' guarded lookup when the socket
 * connects. A 303 (and a 301 or 302 after a POST) continues as a GET without body; a hop to another origin drops
 * every header but `accept`, `accept-language`, `content-language`, `content-type` and `user-agent` (a secret may
 * be in any header); a hop to a scheme other than http or https is refused. Network failures are classified
 * KeelErrors; an abort rejects with the signal's reason.
 */
export async function exchange(request: ExchangeRequest): Promise<ExchangeResponse> {
  let url = request.url;
  let method = request.method;
  let body = request.body;
  const headers = { ...request.headers };
  for (let redirects = 0; ; redirects++) {
    const response = await send(request, url, method, headers, body);
    const location = response.headers.location;
    if (!REDIRECT_STATUSES.has(response.statusCode ?? 0) || location === undefined) {
      const { bytes, truncated } = await readBody(response, request);
      return {
        status: response.statusCode ?? 0,
        statusText: response.statusMessage ?? '',
        headers: response.headers,
        body: bytes,
        truncated,
        url,
      };
    }
    response.destroy();
    if (redirects >= request.maxRedirects) {
      throw new KeelError('tool.failed', `${request.toolName}: more than ${request.maxRedirects} redirects`, {
        provider: request.toolName,
        data: { maxRedirects: request.maxRedirects },
      });
    }
    const next = nextUrl(location, url, request.toolName);
    const status = response.statusCode!;
    if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
      method = method === 'HEAD' ? 'HEAD' : 'GET';
      body = undefined;
      delete headers['content-type'];
      delete headers['content-length'];
    }
    if (next.origin !== url.origin) {
      for (const name of Object.keys(headers)) {
        // Only headers that cannot carry a credential go on: a key may be in any header (`x-custom`), and fetch
        // would drop `authorization` alone.
        if (!PLAIN_HEADERS.has(name)) delete headers[name];
      }
    }
    url = next;
  }
}

function nextUrl(location: string, current: URL, toolName: string): URL {
  let next: URL;
  try {
    next = new URL(location, current);
  } catch (error) {
    throw new KeelError('tool.failed', `${toolName}: the server redirected to an invalid URL`, {
      provider: toolName,
      cause: error,
    });
  }
  if (next.protocol !== 'http:' && next.protocol !== 'https:') {
    throw new KeelError(
      'tool.permission_denied',
      `${toolName}: refused a redirect to a ${next.protocol} URL`,
      {
        provider: toolName,
        data: { protocol: next.protocol },
      },
    );
  }
  return next;
}

function send(
  request: ExchangeRequest,
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: Buffer | undefined,
): Promise<IncomingMessage> {
  const { signal, toolName } = request;
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  // A literal address never goes through a lookup: it is checked here.
  if (parseAddress(hostname) !== undefined) request.policy.check(hostname, hostname);
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const secure = url.protocol === 'https:';
    const outgoing = (secure ? httpsRequest : httpRequest)({
      protocol: url.protocol,
      hostname,
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method,
      headers: body === undefined ? headers : { ...headers, 'content-length': String(body.length) },
      agent: secure ? request.agents.https : request.agents.http,
    });
    const onAbort = (): void => {
      outgoing.destroy(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    outgoing.once('response', (response) => {
      signal.removeEventListener('abort', onAbort);
      resolve(response);
    });
    outgoing.once('error', (error) => {
      signal.removeEventListener('abort', onAbort);
      if (signal.aborted) reject(signal.reason);
      else reject(KeelError.isInstance(error) ? error : classify(error, { provider: toolName }));
    });
    outgoing.end(body);
  });
}

async function readBody(
  response: IncomingMessage,
  request: ExchangeRequest,
): Promise<{ bytes: Buffer; truncated: boolean }> {
  const { signal, maxResponseBytes, toolName } = request;
  const chunks: Buffer[] = [];
  let size = 0;
  const onAbort = (): void => {
    response.destroy(signal.reason);
  };
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      if (size + chunk.length > maxResponseBytes) {
        chunks.push(chunk.subarray(0, maxResponseBytes - size));
        response.destroy();
        return { bytes: Buffer.concat(chunks), truncated: true };
      }
      chunks.push(chunk);
      size += chunk.length;
    }
    return { bytes: Buffer.concat(chunks), truncated: false };
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw new KeelError(
      'network.connection',
      `${toolName}: the connection closed before the response ended`,
      {
        provider: toolName,
        cause: error,
      },
    );
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
