// What the model and the report are told when a tool throws: tool codes, never provider codes, for errors that carry
// an HTTP status, a provider body or a known message; a plain Error is tool.failed.
import { describe, expect, it } from 'vitest';
import { startHttpTestServer } from '../testing/http-test-server.js';
import { toolFailure } from './classify-tool.js';
import { KeelError } from './keel-error.js';

/** An error as HTTP clients throw them: a message and a `status` (fetch wrappers, axios-like, SDK errors). */
function statusError(status: number, headers?: Record<string, string>): Error {
  return Object.assign(new Error(`request failed with status ${status}`), { status, headers });
}

describe('toolFailure: status-bearing errors become tool codes', () => {
  it.each([
    [503, 'tool.unavailable', true],
    [529, 'tool.unavailable', true],
    [429, 'tool.unavailable', true],
    [402, 'tool.unavailable', false],
    [504, 'tool.timeout', true],
    [500, 'tool.failed', true],
    [502, 'tool.failed', true],
    [409, 'tool.failed', true],
    [401, 'tool.permission_denied', false],
    [403, 'tool.permission_denied', false],
    [400, 'tool.invalid_input', false],
    [422, 'tool.invalid_input', false],
    [413, 'tool.invalid_input', false],
    [404, 'tool.failed', false],
  ] as const)('status %i is %s (retryable: %s)', (status, code, retryable) => {
    const error = toolFailure(statusError(status), 'get_weather');
    expect(error.code).toBe(code);
    expect(error.retryable).toBe(retryable);
    expect(error.status).toBe(status);
    expect(error.provider).toBe('get_weather');
    expect(error.data.status).toBe(status);
    expect(String(error.data.classifiedAs)).toMatch(/^provider\./);
    expect(error.message).toContain('get_weather');
  });

  it('keeps the Retry-After of a 429', () => {
    const error = toolFailure(statusError(429, { 'retry-after': '2' }), 'get_weather');
    expect(error.code).toBe('tool.unavailable');
    expect(error.retryAfterMs).toBe(2_000);
  });

  it('a plain Error is tool.failed, not retryable', () => {
    const error = toolFailure(new Error('weather service 503'), 'get_weather');
    expect(error.code).toBe('tool.failed');
    expect(error.retryable).toBe(false);
    expect(error.data.rule).toBe('fallback');
  });

  it('network faults keep their codes', () => {
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    expect(toolFailure(reset, 'get_weather').code).toBe('network.connection');
  });

  it('a KeelError the tool threw, or one in the cause chain, keeps its code', () => {
    const own = new KeelError('provider.overloaded', 'the inner model is overloaded');
    expect(toolFailure(own, 'ask_expert')).toBe(own);
    const wrapped = new Error('sub-agent failed', { cause: own });
    expect(toolFailure(wrapped, 'ask_expert').code).toBe('provider.overloaded');
  });

  it('a 503 read from a real HTTP server by the tool itself is tool.unavailable', async () => {
    const server = await startHttpTestServer((_request, response) => {
      response.writeHead(503, { 'content-type': 'text/plain' });
      response.end('down for maintenance');
    });
    try {
      let thrown: unknown;
      try {
        const response = await fetch(`${server.url}/weather?city=Paris`);
        if (!response.ok) {
          throw Object.assign(new Error(`weather service ${response.status}`), {
            status: response.status,
            headers: response.headers,
          });
        }
      } catch (error) {
        thrown = error;
      }
      const error = toolFailure(thrown, 'get_weather');
      expect(error.code).toBe('tool.unavailable');
      expect(error.retryable).toBe(true);
    } finally {
      await server.close();
    }
  });
});
