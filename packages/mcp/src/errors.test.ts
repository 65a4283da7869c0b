import { KeelError } from '@keel/core';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { type CallSite, callFailure } from './errors.js';

const site: CallSite = { server: 'srv', toolName: 'srv_t', mcpToolName: 't', idempotent: false };

function refused(code: string): Error {
  return new TypeError('fetch failed', { cause: Object.assign(new Error(code), { code }) });
}

describe('callFailure', () => {
  it.each([
    [
      new McpError(ErrorCode.ConnectionClosed, 'Connection closed'),
      'tool.unavailable',
      false,
      { phase: 'in-flight' },
    ],
    [
      new McpError(ErrorCode.RequestTimeout, 'Request timed out', { timeout: 5 }),
      'tool.timeout',
      false,
      { timeoutMs: 5 },
    ],
    [new McpError(ErrorCode.InvalidParams, 'Unknown tool: t'), 'tool.not_found', false, { mcpCode: -32602 }],
    [new McpError(ErrorCode.InvalidParams, 'bad x'), 'tool.invalid_input', false, { mcpCode: -32602 }],
    [
      new McpError(ErrorCode.InvalidParams, "Structured content does not match the tool's output schema"),
      'tool.failed',
      false,
      { reason: 'protocol' },
    ],
    [new McpError(ErrorCode.MethodNotFound, 'no tools'), 'tool.failed', false, { reason: 'protocol' }],
    [new McpError(ErrorCode.InternalError, 'boom'), 'tool.failed', false, { reason: 'server' }],
    [new StreamableHTTPError(401, 'no'), 'tool.permission_denied', false, { status: 401 }],
    [new StreamableHTTPError(404, 'gone'), 'tool.unavailable', true, { phase: 'session-lost' }],
    [
      new StreamableHTTPError(400, 'Bad Request: No valid session ID'),
      'tool.unavailable',
      true,
      { phase: 'session-lost' },
    ],
    [new StreamableHTTPError(503, 'busy'), 'tool.unavailable', true, { phase: 'send', status: 503 }],
    [new StreamableHTTPError(500, 'oops'), 'tool.failed', false, { status: 500 }],
    [new Error('Error POSTing to endpoint (HTTP 503): busy'), 'tool.unavailable', true, { status: 503 }],
    [new Error('Not connected'), 'tool.unavailable', true, { phase: 'send' }],
    [refused('ECONNREFUSED'), 'tool.unavailable', true, { phase: 'send' }],
    [refused('ECONNRESET'), 'tool.unavailable', false, { phase: 'in-flight' }],
    [
      Object.assign(new Error('[{"code":"invalid_type"}]'), { name: 'ZodError' }),
      'tool.failed',
      false,
      { reason: 'protocol' },
    ],
    [new Error('something odd'), 'tool.failed', false, { server: 'srv', tool: 't' }],
  ])('%s is %s', (thrown, code, retryable, data) => {
    const error = callFailure(thrown, site);
    expect(error.code).toBe(code);
    expect(error.retryable).toBe(retryable);
    expect(error.data).toMatchObject(data);
    expect(error.provider).toBe('srv');
  });

  it('a call cut off mid-way may be retried when the tool is idempotent', () => {
    const closed = new McpError(ErrorCode.ConnectionClosed, 'Connection closed');
    expect(callFailure(closed, { ...site, idempotent: true }).retryable).toBe(true);
    expect(callFailure(refused('ECONNRESET'), { ...site, idempotent: true }).retryable).toBe(true);
  });

  it('passes KeelErrors through', () => {
    const error = new KeelError('tool.failed', 'as it is');
    expect(callFailure(error, site)).toBe(error);
  });
});
