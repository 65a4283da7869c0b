import { KeelError } from '@keel/core';
import { optionErrorData } from '@keel/core/adapter';
import { describe, expect, it } from 'vitest';
import { resolveMcpOptions } from './options.js';
import { mcpTools } from './toolset.js';

function rejection(options: unknown): KeelError {
  try {
    mcpTools(options as Parameters<typeof mcpTools>[0]);
  } catch (error) {
    if (KeelError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('mcpTools accepted the options');
}

describe('mcpTools options', () => {
  it.each([
    [undefined, 'options', /options must be an object/],
    [{}, 'command', /needs command .* or url/],
    [{ command: 'node', url: 'http://127.0.0.1/mcp' }, 'url', /either command .* or url .*, not both/],
    [{ command: '' }, 'command', /command must be a program name/],
    [{ command: 'node', args: ['ok', 3] }, 'args', /args must be an array of strings/],
    [{ command: 'node', args: 'server.js' }, 'args', /args must be an array of strings/],
    [{ command: 'node', env: { 'A=B': 'x' } }, 'env', /not a valid variable name/],
    [{ command: 'node', env: { TOKEN: 42 } }, 'env', /env.TOKEN must be a string/],
    [{ command: 'node', cwd: '' }, 'cwd', /cwd must be a directory path/],
    [{ command: 'node', closeGraceMs: 0 }, 'closeGraceMs', /above 0/],
    [{ command: 'node', processGroup: 'no' }, 'processGroup', /true or false/],
    [{ url: 'not a url' }, 'url', /absolute http\(s\) URL/],
    [{ url: 'ftp://example.com/mcp' }, 'url', /http or https/],
    [{ url: 'http://127.0.0.1/mcp', headers: { a: 1 } }, 'headers', /header a must be a string/],
    [
      { url: 'http://127.0.0.1/mcp', transport: 'websocket' },
      'transport',
      /'auto', 'streamable-http' or 'sse'/,
    ],
    [{ command: 'node', prefix: 'has space' }, 'prefix', /prefix must be 1 to 32/],
    [{ command: 'node', prefix: 'x'.repeat(33) }, 'prefix', /prefix must be 1 to 32/],
    [{ command: 'node', name: ' ' }, 'name', /name must be a non-empty string/],
    [{ command: 'node', timeoutMs: -1 }, 'timeoutMs', /timeoutMs must be milliseconds above 0/],
    [{ command: 'node', timeoutMs: Number.NaN }, 'timeoutMs', /above 0/],
    [{ command: 'node', connectTimeoutMs: 2 ** 31 }, 'connectTimeoutMs', /at most 2147483647/],
    [
      { command: 'node', resetTimeoutOnProgress: true, timeoutMs: 10_000, maxTotalTimeoutMs: 5_000 },
      'maxTotalTimeoutMs',
      /at least timeoutMs/,
    ],
    [{ command: 'node', resetTimeoutOnProgress: 'yes' }, 'resetTimeoutOnProgress', /true or false/],
    [{ command: 'node', destructiveNeedsApproval: 1 }, 'destructiveNeedsApproval', /true or false/],
    [{ command: 'node', include: 'echo' }, 'include', /array of tool names/],
    [{ command: 'node', exclude: [''] }, 'exclude', /array of tool names/],
    [{ command: 'node', breaker: true }, 'breaker', /breaker options or false/],
    [{ command: 'node', onProgress: 'log' }, 'onProgress', /onProgress must be a function/],
    [{ command: 'node', mapResult: {} }, 'mapResult', /mapResult must be a function/],
    [{ command: 'node', onStderr: 1 }, 'onStderr', /onStderr must be a function/],
    [{ command: 'node', signal: {} }, 'signal', /AbortSignal/],
    [{ command: 'node', clock: { now: () => 0 } }, 'clock', /Clock/],
  ])('refuses %j with config.invalid naming %s', (options, option, message) => {
    const error = rejection(options);
    expect(error.code).toBe('config.invalid');
    expect(error.message).toMatch(message);
    // The kit's data, which the agent-file loader turns into the field's place in the file.
    expect(optionErrorData(error)).toEqual({
      where: 'mcpTools',
      option,
      path: option === 'options' ? [] : [option],
    });
  });

  it('names unknown options, with the closest known one', () => {
    const stdio = rejection({ command: 'node', timeout: 5 });
    expect(stdio.code).toBe('config.invalid');
    expect(stdio.message).toMatch(/Unknown mcpTools option timeout .*did you mean timeoutMs\?/);
    // Options of the other transport are unknown too.
    expect(rejection({ command: 'node', headers: {} }).data.option).toBe('headers');
    expect(rejection({ url: 'http://127.0.0.1/mcp', env: {} }).data.option).toBe('env');
  });

  it('fills in the defaults', () => {
    const resolved = resolveMcpOptions({ command: '/usr/local/bin/my-server', args: ['--flag'] });
    expect(resolved).toMatchObject({
      name: 'my-server',
      prefix: undefined,
      timeoutMs: 60_000,
      resetTimeoutOnProgress: false,
      maxTotalTimeoutMs: 600_000,
      connectTimeoutMs: 10_000,
      destructiveNeedsApproval: false,
      include: undefined,
      breaker: {},
      target: {
        kind: 'stdio',
        command: '/usr/local/bin/my-server',
        args: ['--flag'],
        env: {},
        closeGraceMs: 2_000,
        processGroup: true,
      },
    });
    expect(resolveMcpOptions({ url: 'http://127.0.0.1:3001/mcp' })).toMatchObject({
      name: '127_0_0_1_3001',
      target: { kind: 'http', transport: 'auto', headers: {} },
    });
    expect(resolveMcpOptions({ command: 'node', prefix: 'fs' }).name).toBe('fs');
  });

  it('starts nothing when the options are checked', () => {
    const toolset = mcpTools({ command: 'keel-no-such-program' });
    expect(toolset.state).toBe('idle');
    expect(toolset.pid).toBeUndefined();
  });
});
