import { classify, type JsonValue, KeelError } from '@keel/core';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';

/** The call a failure belongs to, for messages and data. */
export interface CallSite {
  readonly server: string;
  /** The keel tool's name. */
  readonly toolName: string;
  /** The tool's name on the server. */
  readonly mcpToolName: string;
  /** Whether running the tool twice is harmless: a call cut off mid-way may then be retried. */
  readonly idempotent: boolean;
}

/** An MCP error as the SDK raises it (duck-typed, so that another copy of the SDK is recognised too). */
interface McpErrorLike {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

const NOT_FOUND = /unknown tool|tool\b.*\bnot found|no such tool/i;
const RESULT_SCHEMA = /structured content|output schema/i;
const SESSION = /session/i;

/**
 * A failed `tools/call` as a KeelError, by what the failure says about the server:
 * - the connection closed mid-call (the server died or closed its stream): `tool.unavailable`, retryable only for an
 *   idempotent tool, since the call may have taken effect;
 * - the SDK's request timeout: `tool.timeout`;
 * - JSON-RPC invalid params: `tool.not_found` when it names an unknown tool, else `tool.invalid_input`;
 * - a result that breaks the tool's output schema, other protocol errors and the server's internal errors:
 *   `tool.failed` with `data.mcpCode`;
 * - HTTP refusals: 401/403 `tool.permission_denied`; a lost session (404, or 400 about the session), 429, 502, 503,
 *   504 and refused connections: `tool.unavailable`, retryable (nothing ran).
 */
export function callFailure(thrown: unknown, site: CallSite): KeelError {
  if (KeelError.isInstance(thrown)) return thrown;
  const base = { server: site.server, tool: site.mcpToolName };
  if (isMcpError(thrown)) return mcpFailure(thrown, site, base);
  const status = httpStatus(thrown);
  if (status !== undefined) return httpFailure(thrown, status, site, base);
  if (isNotConnected(thrown)) return unreachable(site.server, thrown, { ...base, phase: 'send' });
  if (isZodError(thrown)) {
    return new KeelError(
      'tool.failed',
      `MCP server "${site.server}" answered ${site.mcpToolName} with a malformed result: ${brief(thrown)}`,
      { provider: site.server, data: { ...base, reason: 'protocol' }, cause: thrown },
    );
  }
  const classified = classify(thrown, { provider: site.server });
  if (classified.code === 'network.connection' || classified.code === 'network.timeout') {
    // A refused connection proves the server never saw the call; any other network fault may have cut it mid-way.
    const nothingRan = classified.data.systemCode === 'ECONNREFUSED';
    return new KeelError(
      'tool.unavailable',
      `MCP server "${site.server}" could not be reached during ${site.mcpToolName}: ${classified.message}`,
      {
        retryable: nothingRan || site.idempotent,
        provider: site.server,
        data: { ...base, phase: nothingRan ? 'send' : 'in-flight' },
        guidance: nothingRan ? unreachableGuidance(site.server) : inFlightGuidance(site.server),
        cause: thrown,
      },
    );
  }
  return new KeelError(
    'tool.failed',
    `MCP tool ${site.mcpToolName} on server "${site.server}" failed: ${brief(thrown)}`,
    { provider: site.server, data: base, cause: thrown },
  );
}

/**
 * The error for a result the server marked `isError: true`: its text, as the server wrote it. The TypeScript SDK's
 * servers report unknown tools and invalid arguments this way too (`MCP error -32602: Tool x not found`,
 * `MCP error -32602: Input validation error: ...`), so those get `tool.not_found` and `tool.invalid_input`.
 */
export function resultError(text: string, site: CallSite, content: JsonValue): KeelError {
  const message = text.trim() === '' ? `MCP tool ${site.mcpToolName} reported an error without text` : text;
  const data = { server: site.server, tool: site.mcpToolName, content };
  const invalidParams = /^MCP error -32602:/.test(text);
  if (invalidParams && NOT_FOUND.test(text)) return notFound(message, site, data);
  if (invalidParams) return toolInputError(message, site, data);
  return new KeelError('tool.failed', message, { provider: site.server, data });
}

/** The error for a call made while the server cannot be reached (it did not start, refused, or the toolset is closed). */
export function unreachable(
  server: string,
  cause: unknown,
  data: Record<string, JsonValue>,
  detail?: string,
): KeelError {
  const reason = cause === undefined ? '' : `: ${brief(cause)}`;
  const extra = detail === undefined || detail === '' ? '' : `\n${detail}`;
  return new KeelError('tool.unavailable', `MCP server "${server}" is unavailable${reason}${extra}`, {
    provider: server,
    data: { server, ...data },
    guidance: unreachableGuidance(server),
    cause,
  });
}

/** The error for a call refused because the server's breaker is open: the model is told to stop using it. */
export function breakerOpen(server: string, refusal: KeelError): KeelError {
  return new KeelError(
    'tool.unavailable',
    `MCP server "${server}" is unavailable: it failed repeatedly and is not called for now`,
    {
      retryable: false,
      retryAfterMs: refusal.retryAfterMs,
      provider: server,
      data: { server, phase: 'breaker-open', ...refusal.data },
      guidance: `Do not call tools of the MCP server "${server}" again for this task: answer without them, or say that they are unavailable.`,
      cause: refusal,
    },
  );
}

/** The error for a call cut off because the toolset was closed. */
export function closedDuringCall(site: CallSite): KeelError {
  return new KeelError(
    'tool.unavailable',
    `The MCP toolset for server "${site.server}" was closed during ${site.mcpToolName}`,
    {
      retryable: false,
      provider: site.server,
      data: { server: site.server, tool: site.mcpToolName, phase: 'closed' },
    },
  );
}

function mcpFailure(error: McpErrorLike, site: CallSite, base: Record<string, JsonValue>): KeelError {
  const data = { ...base, mcpCode: error.code };
  switch (error.code) {
    case ErrorCode.ConnectionClosed:
      return new KeelError(
        'tool.unavailable',
        `MCP server "${site.server}" closed the connection during ${site.mcpToolName}`,
        {
          retryable: site.idempotent,
          provider: site.server,
          data: { ...data, phase: 'in-flight' },
          guidance: inFlightGuidance(site.server),
          cause: error,
        },
      );
    case ErrorCode.RequestTimeout:
      return new KeelError(
        'tool.timeout',
        `MCP tool ${site.mcpToolName} on server "${site.server}" did not answer in time`,
        {
          retryable: site.idempotent,
          provider: site.server,
          data: { ...data, ...timeoutData(error.data) },
          cause: error,
        },
      );
    case ErrorCode.InvalidParams:
      if (RESULT_SCHEMA.test(error.message)) break;
      return NOT_FOUND.test(error.message)
        ? notFound(error.message, site, data, error)
        : toolInputError(error.message, site, data, error);
  }
  const reason = error.code === ErrorCode.InternalError ? 'server' : 'protocol';
  return new KeelError(
    'tool.failed',
    `MCP tool ${site.mcpToolName} on server "${site.server}" failed: ${error.message}`,
    {
      provider: site.server,
      data: { ...data, reason },
      cause: error,
    },
  );
}

function httpFailure(
  error: unknown,
  status: number,
  site: CallSite,
  base: Record<string, JsonValue>,
): KeelError {
  const data = { ...base, status };
  const text = brief(error);
  if (status === 401 || status === 403) {
    return new KeelError('tool.permission_denied', `MCP server "${site.server}" refused the call: ${text}`, {
      status,
      provider: site.server,
      data,
      guidance: 'The server refused these credentials; this tool cannot be used until they are fixed.',
      cause: error,
    });
  }
  const sessionLost = status === 404 || (status === 400 && SESSION.test(text));
  if (sessionLost || status === 429 || status === 502 || status === 503 || status === 504) {
    return new KeelError('tool.unavailable', `MCP server "${site.server}" did not take the call: ${text}`, {
      retryable: true,
      status,
      provider: site.server,
      data: { ...data, phase: sessionLost ? 'session-lost' : 'send' },
      guidance: unreachableGuidance(site.server),
      cause: error,
    });
  }
  return new KeelError('tool.failed', `MCP server "${site.server}" failed the call: ${text}`, {
    status,
    provider: site.server,
    data,
    cause: error,
  });
}

function notFound(
  message: string,
  site: CallSite,
  data: Record<string, JsonValue>,
  cause?: unknown,
): KeelError {
  return new KeelError('tool.not_found', message, {
    provider: site.server,
    data,
    guidance: `The MCP server "${site.server}" does not offer ${site.mcpToolName} any more; use another tool.`,
    cause,
  });
}

function toolInputError(
  message: string,
  site: CallSite,
  data: Record<string, JsonValue>,
  cause?: unknown,
): KeelError {
  return new KeelError('tool.invalid_input', message, {
    provider: site.server,
    data,
    guidance: 'Correct the arguments as the message says, then call the tool again.',
    cause,
  });
}

function inFlightGuidance(server: string): string {
  return `The MCP server "${server}" stopped while running this call, so it may or may not have taken effect: check before repeating a call with side effects. The next call reconnects.`;
}

function unreachableGuidance(server: string): string {
  return `The MCP server "${server}" could not be reached; its tools may work again later.`;
}

function timeoutData(data: unknown): Record<string, JsonValue> {
  const value = (data as { timeout?: unknown; maxTotalTimeout?: unknown } | undefined) ?? {};
  const result: Record<string, JsonValue> = {};
  if (typeof value.timeout === 'number') result.timeoutMs = value.timeout;
  if (typeof value.maxTotalTimeout === 'number') result.maxTotalTimeoutMs = value.maxTotalTimeout;
  return result;
}

function isMcpError(value: unknown): value is McpErrorLike {
  return (
    value instanceof Error &&
    (value.name === 'McpError' || value.name === 'UrlElicitationRequiredError') &&
    typeof (value as { code?: unknown }).code === 'number'
  );
}

/** The HTTP status of the SDK's `StreamableHTTPError` (its `code`) or of the SSE transport's POST failures. */
function httpStatus(value: unknown): number | undefined {
  if (!(value instanceof Error)) return undefined;
  const code = (value as { code?: unknown }).code;
  if (value.message.startsWith('Streamable HTTP error') && typeof code === 'number' && code >= 100)
    return code;
  const match = /^Error POSTing to endpoint \(HTTP (\d{3})\)/.exec(value.message);
  return match === null ? undefined : Number(match[1]);
}

function isNotConnected(value: unknown): boolean {
  return value instanceof Error && value.message === 'Not connected';
}

function isZodError(value: unknown): boolean {
  return value instanceof Error && value.name === 'ZodError';
}

/** An error's message on one line, whitespace collapsed, at most 500 characters. */
export function brief(value: unknown): string {
  const text = (value instanceof Error ? value.message : String(value)).replace(/\s+/g, ' ').trim();
  return text.length > 500 ? `${text.slice(0, 500)}...` : text;
}
