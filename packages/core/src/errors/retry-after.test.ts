import { describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_MS, parseDurationMs, retryAfterFromHeaders } from './retry-after.js';

const NOW_MS = Date.parse('2025-06-01T12:00:00Z');

describe('retryAfterFromHeaders', () => {
  const cases: readonly [label: string, headers: Record<string, string>, expected: number | undefined][] = [
    ['retry-after in seconds', { 'retry-after': '2' }, 2_000],
    ['retry-after with fractional seconds', { 'retry-after': '1.5' }, 1_500],
    ['retry-after of zero', { 'retry-after': '0' }, 0],
    ['retry-after as an HTTP-date 30 s ahead', { 'retry-after': 'Sun, 01 Jun 2025 12:00:30 GMT' }, 30_000],
    ['retry-after as an HTTP-date in the past', { 'retry-after': 'Sun, 01 Jun 2025 11:59:00 GMT' }, 0],
    ['retry-after in RFC 850 form', { 'retry-after': 'Sunday, 01-Jun-25 12:01:00 GMT' }, 60_000],
    ['negative retry-after', { 'retry-after': '-5' }, undefined],
    ['garbage retry-after', { 'retry-after': 'soon' }, undefined],
    ['a bare number that is not a date', { 'retry-after': '12 34' }, undefined],
    ['retry-after-ms', { 'retry-after-ms': '250' }, 250],
    ['garbage retry-after-ms', { 'retry-after-ms': 'NaN' }, undefined],
    ['retry-after-ms before retry-after', { 'retry-after-ms': '250', 'retry-after': '1' }, 250],
    ['retry-after when retry-after-ms is garbage', { 'retry-after-ms': 'soon', 'retry-after': '1' }, 1_000],
    [
      'retry-after before an exhausted OpenAI limit (the SDK waits 1 s, not 6 min)',
      {
        'retry-after': '1',
        'x-ratelimit-reset-tokens': '6m0s',
        'x-ratelimit-remaining-tokens': '0',
      },
      1_000,
    ],
    [
      'retry-after before an OpenAI reset without a remaining count',
      { 'retry-after': '1', 'x-ratelimit-reset-tokens': '6m0s' },
      1_000,
    ],
    [
      'retry-after-ms before an exhausted Anthropic limit',
      {
        'retry-after-ms': '1200',
        'anthropic-ratelimit-tokens-reset': '2025-06-01T12:00:54Z',
        'anthropic-ratelimit-tokens-remaining': '0',
      },
      1_200,
    ],
    [
      'OpenAI reset of 6m0s when requests ran out',
      { 'x-ratelimit-reset-requests': '6m0s', 'x-ratelimit-remaining-requests': '0' },
      360_000,
    ],
    [
      'OpenAI reset in ms when tokens ran out',
      { 'x-ratelimit-reset-tokens': '20ms', 'x-ratelimit-remaining-tokens': '0' },
      20,
    ],
    [
      'OpenAI reset of 2m3.5s when tokens ran out',
      { 'x-ratelimit-reset-tokens': '2m3.5s', 'x-ratelimit-remaining-tokens': '0' },
      123_500,
    ],
    [
      'an OpenAI reset without a remaining count is not known to be the limit that ran out',
      { 'x-ratelimit-reset-tokens': '20ms' },
      undefined,
    ],
    [
      'an OpenAI reset over an hour is capped',
      { 'x-ratelimit-reset-tokens': '1h2m3.5s', 'x-ratelimit-remaining-tokens': '0' },
      MAX_RETRY_AFTER_MS,
    ],
    [
      'an OpenAI reset whose limit still has room is ignored',
      {
        'x-ratelimit-reset-tokens': '6m0s',
        'x-ratelimit-remaining-tokens': '1000',
        'x-ratelimit-reset-requests': '1s',
        'x-ratelimit-remaining-requests': '0',
      },
      1_000,
    ],
    [
      'the longest reset of the limits that ran out',
      {
        'x-ratelimit-reset-tokens': '7s',
        'x-ratelimit-remaining-tokens': '0',
        'x-ratelimit-reset-requests': '1s',
        'x-ratelimit-remaining-requests': '0',
      },
      7_000,
    ],
    [
      'garbage OpenAI reset',
      { 'x-ratelimit-reset-requests': '6 minutes', 'x-ratelimit-remaining-requests': '0' },
      undefined,
    ],
    [
      'Anthropic RFC 3339 reset',
      {
        'anthropic-ratelimit-requests-reset': '2025-06-01T12:00:07Z',
        'anthropic-ratelimit-requests-remaining': '0',
      },
      7_000,
    ],
    [
      'Anthropic reset in the past',
      {
        'anthropic-ratelimit-tokens-reset': '2025-06-01T11:00:00Z',
        'anthropic-ratelimit-tokens-remaining': '0',
      },
      0,
    ],
    [
      'Anthropic reset that is not a timestamp',
      { 'anthropic-ratelimit-tokens-reset': '7', 'anthropic-ratelimit-tokens-remaining': '0' },
      undefined,
    ],
    [
      'Anthropic resets of limits with room left (the SDK waits for retry-after)',
      {
        'retry-after': '1',
        'anthropic-ratelimit-input-tokens-reset': '2025-06-01T12:00:54Z',
        'anthropic-ratelimit-input-tokens-remaining': '0',
        'anthropic-ratelimit-requests-reset': '2025-06-01T12:00:20Z',
        'anthropic-ratelimit-requests-remaining': '49',
      },
      1_000,
    ],
    [
      'the longest of the exhausted Anthropic limits without retry-after',
      {
        'anthropic-ratelimit-input-tokens-reset': '2025-06-01T12:00:20Z',
        'anthropic-ratelimit-input-tokens-remaining': '0',
        'anthropic-ratelimit-output-tokens-reset': '2025-06-01T12:00:09Z',
        'anthropic-ratelimit-output-tokens-remaining': '0',
        'anthropic-ratelimit-requests-reset': '2025-06-01T12:00:50Z',
        'anthropic-ratelimit-requests-remaining': '3',
      },
      20_000,
    ],
    ['an absurd retry-after is capped', { 'retry-after': '999999999' }, MAX_RETRY_AFTER_MS],
    ['a date years ahead is capped', { 'retry-after': 'Fri, 01 Jan 2100 00:00:00 GMT' }, MAX_RETRY_AFTER_MS],
    ['no relevant header', { 'content-type': 'application/json' }, undefined],
  ];

  it.each(cases)('%s', (_label, headers, expected) => {
    expect(retryAfterFromHeaders(headers, NOW_MS)).toBe(expected);
  });

  it('reads a fetch Headers object', () => {
    expect(retryAfterFromHeaders(new Headers({ 'Retry-After': '4' }), NOW_MS)).toBe(4_000);
  });

  it('reads a plain record case-insensitively, with array and number values', () => {
    expect(retryAfterFromHeaders({ 'Retry-After': ['5', '9'] }, NOW_MS)).toBe(5_000);
    expect(retryAfterFromHeaders({ 'RETRY-AFTER-MS': 75 }, NOW_MS)).toBe(75);
  });

  it('answers undefined for missing or hostile headers', () => {
    expect(retryAfterFromHeaders(undefined, NOW_MS)).toBeUndefined();
    expect(retryAfterFromHeaders(null, NOW_MS)).toBeUndefined();
    const hostile = {
      get(): string {
        throw new Error('boom');
      },
    };
    expect(retryAfterFromHeaders(hostile, NOW_MS)).toBeUndefined();
  });
});

describe('parseDurationMs', () => {
  it.each([
    ['1s', 1_000],
    ['6m0s', 360_000],
    ['20ms', 20],
    ['1h2m3.5s', 3_723_500],
    ['0.5s', 500],
    ['1m30s', 90_000],
    ['2', 2_000],
    ['', undefined],
    ['5x', undefined],
    ['1s junk', undefined],
  ] as const)('%s -> %s', (text, expected) => {
    expect(parseDurationMs(text)).toBe(expected);
  });
});
