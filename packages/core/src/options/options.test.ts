import { describe, expect, it } from 'vitest';
import { KeelError } from '../errors/keel-error.js';
import {
  MAX_TIMER_MS,
  requireBoolean,
  requireClock,
  requireFunction,
  requireInteger,
  requireMilliseconds,
  requireNumber,
  requireOneOf,
  requireString,
  requireStringArray,
} from './checks.js';
import { type KnownOptions, rejectUnknownOptions, requireOptionsObject } from './known-options.js';
import { optionError, optionErrorData, optionPathOf, optionPathText } from './option-error.js';

function refusal(run: () => unknown): KeelError {
  try {
    run();
  } catch (error) {
    expect(KeelError.isInstance(error)).toBe(true);
    expect((error as KeelError).code).toBe('config.invalid');
    return error as KeelError;
  }
  throw new Error('expected a refusal');
}

const where = 'widget()';

describe('option kit', () => {
  it('requireInteger returns the value or its default and refuses other values with typed data', () => {
    expect(requireInteger(5, { where, option: 'count', min: 1, max: 10 })).toBe(5);
    expect(requireInteger(undefined, { where, option: 'count', min: 1, default: 3 })).toBe(3);
    const error = refusal(() => requireInteger(0, { where, option: 'timeoutMs', min: 1, max: 60_000 }));
    expect(error.message).toBe(
      'widget(): timeoutMs must be an integer of milliseconds from 1 to 60000, got 0',
    );
    expect(error.data).toEqual({ where, option: 'timeoutMs', path: ['timeoutMs'] });
    expect(refusal(() => requireInteger(1.5, { where, option: 'count', min: 0 })).message).toBe(
      'widget(): count must be an integer >= 0, got 1.5',
    );
    expect(refusal(() => requireInteger('2', { where, option: 'count' })).message).toContain('got "2"');
    expect(refusal(() => requireInteger(undefined, { where, option: 'count' })).message).toContain(
      'got undefined',
    );
    expect(
      requireInteger(Number.POSITIVE_INFINITY, { where, option: 'count', min: 1, allowInfinity: true }),
    ).toBe(Number.POSITIVE_INFINITY);
    expect(
      refusal(() => requireInteger(Number.NaN, { where, option: 'count', allowInfinity: true })).message,
    ).toContain('(or Infinity)');
  });

  it('names a nested option by its path', () => {
    const error = refusal(() =>
      requireInteger(-1, { where, option: 'limits', path: ['limits', 'cpuSeconds'], min: 0 }),
    );
    expect(error.message).toBe('widget(): limits.cpuSeconds must be an integer >= 0, got -1');
    expect(error.data).toEqual({ where, option: 'limits', path: ['limits', 'cpuSeconds'] });
    expect(refusal(() => requireBoolean('yes', { where, option: 'retry.jitter' })).data).toEqual({
      where,
      option: 'retry',
      path: ['retry', 'jitter'],
    });
  });

  it('requireMilliseconds bounds at 0 and the longest timer unless told otherwise', () => {
    expect(requireMilliseconds(0, { where, option: 'delayMs' })).toBe(0);
    expect(requireMilliseconds(undefined, { where, option: 'delayMs', default: 5 })).toBe(5);
    expect(refusal(() => requireMilliseconds(MAX_TIMER_MS + 1, { where, option: 'delayMs' })).message).toBe(
      `widget(): delayMs must be an integer of milliseconds from 0 to ${MAX_TIMER_MS}, got ${MAX_TIMER_MS + 1}`,
    );
  });

  it('requireNumber refuses NaN always and Infinity when finite', () => {
    expect(requireNumber(0.5, { where, option: 'rate', min: 0, max: 1 })).toBe(0.5);
    expect(refusal(() => requireNumber(Number.NaN, { where, option: 'rate' })).data.option).toBe('rate');
    expect(
      refusal(() =>
        requireNumber(Number.POSITIVE_INFINITY, { where, option: 'factor', min: 1, finite: true }),
      ).message,
    ).toBe('widget(): factor must be a finite number >= 1, got Infinity');
    expect(
      refusal(() => requireNumber(0, { where, option: 'rate', min: Number.MIN_VALUE, max: 1 })).message,
    ).toBe('widget(): rate must be a number above 0 and at most 1, got 0');
  });

  it('requireString, requireBoolean, requireOneOf, requireFunction and requireClock', () => {
    expect(requireString(undefined, { where, option: 'name', default: 'x' })).toBe('x');
    expect(
      refusal(() => requireString('', { where, option: 'url', nonEmpty: true, example: 'https://a.example' }))
        .message,
    ).toBe('widget(): url must be a non-empty string such as https://a.example, got ""');
    expect(requireBoolean(false, { where, option: 'on', default: true })).toBe(false);
    expect(refusal(() => requireBoolean(1, { where, option: 'on' })).message).toBe(
      'widget(): on must be true or false, got 1',
    );
    expect(requireOneOf('GET', ['GET', 'HEAD'], { where, option: 'method' })).toBe('GET');
    expect(refusal(() => requireOneOf('PUT', ['GET', 'HEAD'], { where, option: 'method' })).message).toBe(
      'widget(): method must be one of "GET", "HEAD", got "PUT"',
    );
    const handler = () => true;
    expect(requireFunction(handler, { where, option: 'when' })).toBe(handler);
    expect(
      refusal(() => requireFunction(1, { where, option: 'when', signature: '(error) => boolean' })).message,
    ).toBe('widget(): when must be a function (error) => boolean, got 1');
    const clock = { now: () => 0, setTimeout: () => 1, clearTimeout: () => undefined };
    expect(requireClock(clock, { where, option: 'clock' })).toBe(clock);
    expect(refusal(() => requireClock({ now: () => 0 }, { where, option: 'clock' })).data.option).toBe(
      'clock',
    );
  });

  it('requireStringArray names the item at fault by its index', () => {
    expect(requireStringArray(['a'], { where, option: 'allow' })).toEqual(['a']);
    expect(requireStringArray(undefined, { where, option: 'allow', default: [] })).toEqual([]);
    const error = refusal(() => requireStringArray(['a', 2], { where, option: 'allow' }));
    expect(error.message).toBe('widget(): allow[1] must be a string, got 2');
    expect(error.data).toEqual({ where, option: 'allow', path: ['allow', 1] });
    expect(refusal(() => requireStringArray([], { where, option: 'allow', nonEmpty: true })).message).toBe(
      'widget(): allow must be a non-empty array of strings, got an array',
    );
  });

  it('requireOptionsObject refuses what is not a plain object', () => {
    const error = refusal(() => requireOptionsObject([], { where, example: '{ size: 2 }' }));
    expect(error.message).toBe('widget(): options must be an object such as { size: 2 }, got an array');
    expect(error.data).toEqual({ where, option: 'options', path: [] });
    expect(refusal(() => requireOptionsObject(null, { where, path: ['limits'] })).data).toEqual({
      where,
      option: 'limits',
      path: ['limits'],
    });
  });

  it('rejectUnknownOptions suggests the known name meant, from a list typed against the options', () => {
    interface WidgetOptions {
      baseUrl?: string;
      timeoutMs?: number;
    }
    const known = { baseUrl: true, timeoutMs: true } satisfies KnownOptions<WidgetOptions>;
    rejectUnknownOptions({ baseUrl: 'x' }, known, { where });
    const error = refusal(() => rejectUnknownOptions({ baseURL: 'x' }, known, { where }));
    expect(error.message).toBe(
      'Unknown widget() option baseURL (known: baseUrl, timeoutMs); did you mean baseUrl?',
    );
    expect(error.data).toEqual({ where, option: 'baseURL', path: ['baseURL'], suggestion: 'baseUrl' });
    const nested = refusal(() =>
      rejectUnknownOptions({ zzz: 1 }, ['cpuSeconds'], { where, path: ['limits'] }),
    );
    expect(nested.message).toBe('Unknown widget() option zzz (known: cpuSeconds)');
    expect(nested.data).toEqual({ where, option: 'limits', path: ['limits', 'zzz'] });
  });

  it('optionError carries where, option and path; optionErrorData reads them back', () => {
    const error = optionError({
      where,
      option: 'command',
      path: ['command', 2, 3],
      message: 'bad',
      guidance: 'fix it',
    });
    expect(error.message).toBe('widget(): bad');
    expect(error.guidance).toBe('fix it');
    expect(optionErrorData(error)).toEqual({ where, option: 'command', path: ['command', 2, 3] });
    expect(optionErrorData(KeelError.fromJSON(error.toJSON()))).toEqual(optionErrorData(error));
    expect(optionErrorData(new KeelError('config.invalid', 'x', { data: { option: 'a' } }))).toBeUndefined();
    expect(optionErrorData(new Error('x'))).toBeUndefined();
  });

  it('reads and writes option paths', () => {
    expect(optionPathOf('limits.cpuSeconds')).toEqual(['limits', 'cpuSeconds']);
    expect(optionPathOf('command[2][3]')).toEqual(['command', 2, 3]);
    expect(optionPathOf('options')).toEqual([]);
    expect(optionPathText(['tools', 2, 'command', 'argv', 3])).toBe('tools[2].command.argv[3]');
  });
});
