import { describe, expect, it } from 'vitest';
import { KeelError } from '../../errors/keel-error.js';
import { DEFAULT_TOOL_RESULT_MAX_CHARS, renderToolResult, toolError, toolSuccess } from './tool-result.js';

describe('toolSuccess', () => {
  it('keeps JSON content as it is', () => {
    expect(toolSuccess({ temperatureC: 21, tags: ['a'], ok: true, none: null })).toEqual({
      status: 'success',
      content: { temperatureC: 21, tags: ['a'], ok: true, none: null },
    });
  });

  it('turns any value into JSON: undefined, bigint, dates, maps, sets, errors, cycles', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const shared = { id: 1 };
    expect(
      toolSuccess({
        missing: undefined,
        big: 10n,
        when: new Date('2025-01-02T03:04:05.000Z'),
        map: new Map([['a', 1]]),
        set: new Set([1, 2]),
        error: new TypeError('boom'),
        fn: () => 1,
        infinite: Number.POSITIVE_INFINITY,
        cyclic,
        twice: [shared, shared],
      }).content,
    ).toEqual({
      big: '10',
      when: '2025-01-02T03:04:05.000Z',
      map: { a: 1 },
      set: [1, 2],
      error: { name: 'TypeError', message: 'boom' },
      infinite: 'Infinity',
      cyclic: { name: 'loop', self: '[circular]' },
      twice: [{ id: 1 }, { id: 1 }],
    });
    expect(toolSuccess(undefined).content).toBeNull();
  });

  it('cuts nesting deeper than 64 levels', () => {
    let deep: unknown = 'bottom';
    for (let level = 0; level < 100; level++) deep = [deep];
    expect(JSON.stringify(toolSuccess(deep).content)).toContain('[too deep]');
  });
});

describe('toolError', () => {
  const error = new KeelError('tool.failed', 'upstream said no', {
    guidance: 'Try another city.',
    data: { status: 503 },
    cause: new Error('socket hang up'),
  });

  it('carries the serialised error and its guidance', () => {
    const result = toolError(error);
    expect(result).toMatchObject({ status: 'error', guidance: 'Try another city.' });
    if (result.status !== 'error') return;
    expect(result.error).toMatchObject({
      code: 'tool.failed',
      message: 'upstream said no',
      cause: { message: 'socket hang up' },
    });
  });

  it('prefers explicit guidance, and works without any', () => {
    expect(toolError(error, 'Ask the user.')).toMatchObject({ guidance: 'Ask the user.' });
    expect(toolError(new KeelError('tool.timeout', 'slow'))).not.toHaveProperty('guidance');
  });

  it('refuses values that are not KeelErrors', () => {
    expect(() => toolError(new Error('raw') as KeelError)).toThrow(/classify the thrown value first/);
  });
});

describe('renderToolResult', () => {
  it('renders success as JSON', () => {
    expect(renderToolResult(toolSuccess({ temperatureC: 21 }))).toEqual({
      content: '{"status":"success","content":{"temperatureC":21}}',
      isError: false,
      truncated: false,
      originalChars: 50,
    });
  });

  it('renders errors with code, message, retryability, data and guidance, without causes', () => {
    const rendered = renderToolResult(
      toolError(
        new KeelError('tool.invalid_input', 'bad city', {
          data: { tool: 'get_weather' },
          cause: new Error('secret internals'),
        }),
        'Use a city name.',
      ),
    );
    expect(rendered.isError).toBe(true);
    expect(JSON.parse(rendered.content)).toEqual({
      status: 'error',
      error: {
        code: 'tool.invalid_input',
        message: 'bad city',
        retryable: false,
        data: { tool: 'get_weather' },
      },
      guidance: 'Use a city name.',
    });
    expect(rendered.content).not.toContain('secret internals');
  });

  it('truncates oversized output at 32,768 characters by default and says so', () => {
    const rendered = renderToolResult(toolSuccess('x'.repeat(100_000)));
    expect(rendered.truncated).toBe(true);
    expect(rendered.originalChars).toBe(100_033);
    expect(rendered.content.length).toBeLessThanOrEqual(DEFAULT_TOOL_RESULT_MAX_CHARS);
    expect(rendered.content.length).toBeGreaterThan(DEFAULT_TOOL_RESULT_MAX_CHARS - 200);
    const parsed = JSON.parse(rendered.content);
    expect(parsed.truncated).toBe(true);
    expect(parsed.note).toMatch(/^Output truncated: showing the first \d+ of 100000 characters/);
    expect(parsed.content).toMatch(/^x+$/);
  });

  it('fits within maxChars even when escaping lengthens the text, and never splits a surrogate pair', () => {
    const rendered = renderToolResult(toolSuccess({ text: '"\n😀'.repeat(5_000) }), { maxChars: 2_000 });
    expect(rendered.content.length).toBeLessThanOrEqual(2_000);
    const parsed = JSON.parse(rendered.content);
    expect(parsed.truncated).toBe(true);
    expect(parsed.content.startsWith('{"text":"\\"\\n😀')).toBe(true);
    expect(parsed.content).not.toMatch(/[\uD800-\uDBFF]$/);
  });

  it('shortens an oversized error: data dropped, message and guidance capped', () => {
    const rendered = renderToolResult(
      toolError(
        new KeelError('tool.failed', 'm'.repeat(50_000), { data: { dump: 'd'.repeat(50_000) } }),
        'g'.repeat(50_000),
      ),
    );
    expect(rendered.truncated).toBe(true);
    expect(rendered.content.length).toBeLessThanOrEqual(DEFAULT_TOOL_RESULT_MAX_CHARS);
    const parsed = JSON.parse(rendered.content);
    expect(parsed.error.data).toBeUndefined();
    expect(parsed.error.message).toMatch(/^m{2000}\.\.\. \[truncated\]$/);
    expect(parsed.guidance).toMatch(/^g{2000}\.\.\. \[truncated\]$/);
    expect(parsed.note).toContain('shortened');
  });

  it('renders a degraded success with its degradation, kept when the content is cut', () => {
    const degraded = {
      from: 'search',
      to: 'search_cache',
      errorCode: 'tool.timeout' as const,
      reason: 'from the cache',
    };
    expect(renderToolResult(toolSuccess({ hits: 1 }, degraded)).content).toBe(
      '{"status":"success","content":{"hits":1},"degraded":{"from":"search","to":"search_cache","errorCode":"tool.timeout","reason":"from the cache"}}',
    );
    const long = renderToolResult(
      toolSuccess('x'.repeat(5_000), { ...degraded, reason: 'r'.repeat(3_000) }),
      {
        maxChars: 1_024,
      },
    );
    expect(long.truncated).toBe(true);
    expect(long.content.length).toBeLessThanOrEqual(1_024);
    const parsed = JSON.parse(long.content);
    expect(parsed.degraded).toMatchObject({ from: 'search', to: 'search_cache', errorCode: 'tool.timeout' });
    expect(parsed.degraded.reason).toHaveLength(500);
  });

  it('rejects a maxChars too small to say anything', () => {
    expect(() => renderToolResult(toolSuccess(1), { maxChars: 100 })).toThrow(/at least 1024/);
  });
});
