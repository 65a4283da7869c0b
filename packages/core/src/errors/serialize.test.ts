import { describe, expect, it } from 'vitest';
import { classify } from './classify.js';
import { ERROR_CODES, type ErrorCode } from './codes.js';
import { KeelError } from './keel-error.js';
import { REDACTED } from './redact.js';
import { deserializeError, MAX_CAUSE_DEPTH, type SerializedError, serializeError } from './serialize.js';

const roundTrip = (error: KeelError): KeelError => KeelError.fromJSON(JSON.parse(JSON.stringify(error)));

describe('serialisation round trip', () => {
  it.each(Object.keys(ERROR_CODES) as ErrorCode[])(
    '%s survives toJSON -> JSON.stringify -> fromJSON',
    (code) => {
      const original = new KeelError(code, `a ${code} happened`, {
        retryAfterMs: 1_500,
        status: 503,
        provider: 'openai',
        data: { attempt: 2, nested: { list: [1, 'two', null, true] } },
        guidance: 'do the thing',
        cause: new KeelError('network.connection', 'reset'),
      });
      const copy = roundTrip(original);
      expect(copy).toBeInstanceOf(KeelError);
      expect(KeelError.isInstance(copy)).toBe(true);
      expect(copy).toMatchObject({
        code,
        category: ERROR_CODES[code].category,
        retryable: ERROR_CODES[code].retryable,
        message: `a ${code} happened`,
        retryAfterMs: 1_500,
        status: 503,
        provider: 'openai',
        guidance: 'do the thing',
      });
      expect(copy.data).toEqual({ attempt: 2, nested: { list: [1, 'two', null, true] } });
      expect((copy.cause as KeelError).code).toBe('network.connection');
    },
  );

  it('keeps an overridden retryability', () => {
    expect(roundTrip(new KeelError('provider.bad_request', 'x', { retryable: true })).retryable).toBe(true);
  });

  it('brings back a plain cause with its name, code and status, so it classifies the same', () => {
    const socket = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    const original = classify(new TypeError('fetch failed', { cause: socket }));
    const copy = roundTrip(original);
    const cause = copy.cause as Error & { code?: string };
    expect(cause.name).toBe('TypeError');
    expect((cause.cause as { code?: string }).code).toBe('ECONNRESET');
    expect(classify(copy.cause).code).toBe(original.code);

    const http = serializeError(Object.assign(new Error('429 slow down'), { status: 429 }));
    expect(http.status).toBe(429);
    expect(classify(deserializeError(http)).code).toBe('provider.rate_limited');
  });

  it('brings back an error without a known code as internal.unexpected around the original', () => {
    const copy = KeelError.fromJSON({ name: 'RangeError', message: 'out of range' });
    expect(copy.code).toBe('internal.unexpected');
    expect((copy.cause as Error).name).toBe('RangeError');
  });
});

describe('serializeError', () => {
  it('cuts the cause chain at MAX_CAUSE_DEPTH with a marker', () => {
    let error: unknown = new Error('root');
    for (let index = 0; index < MAX_CAUSE_DEPTH + 4; index++)
      error = new Error(`level ${index}`, { cause: error });
    let node: SerializedError | undefined = serializeError(error);
    let depth = 0;
    while (node?.cause !== undefined) {
      node = node.cause;
      depth++;
    }
    expect(depth).toBe(MAX_CAUSE_DEPTH);
    expect(node).toEqual({ name: 'Truncated', message: '[cause chain truncated]' });
    // The copy keeps the marker too.
    let copy: unknown = deserializeError(serializeError(error));
    for (let index = 0; index < MAX_CAUSE_DEPTH; index++) copy = (copy as Error).cause;
    expect((copy as Error).name).toBe('Truncated');
  });

  it('cuts cause cycles', () => {
    const first = new Error('first') as Error & { cause?: unknown };
    first.cause = new Error('second', { cause: first });
    const serialized = serializeError(first);
    expect(serialized.cause?.message).toBe('second');
    expect(serialized.cause?.cause).toEqual({ name: 'Cycle', message: '[cause cycle]' });
    expect(() => JSON.stringify(serialized)).not.toThrow();
  });

  it.each([
    ['a string', 'plain failure', { name: 'Error', message: 'plain failure' }],
    ['a number', 42, { name: 'NonError', message: '42' }],
    ['undefined', undefined, { name: 'NonError', message: 'undefined' }],
    ['null', null, { name: 'NonError', message: 'null' }],
    ['a BigInt', 10n, { name: 'NonError', message: '10' }],
    ['a symbol', Symbol('s'), { name: 'NonError', message: 'Symbol(s)' }],
    ['an object', { reason: 'nope', count: 2 }, { name: 'NonError', message: '{"reason":"nope","count":2}' }],
    [
      'a null-prototype object',
      Object.assign(Object.create(null), { a: 1 }),
      { name: 'NonError', message: '{"a":1}' },
    ],
    [
      'an error-like object',
      { name: 'GrpcError', message: 'unavailable' },
      { name: 'GrpcError', message: 'unavailable' },
    ],
  ])('describes %s', (_label, value, expected) => {
    expect(serializeError(value)).toEqual(expected);
  });

  it('drops secrets from a thrown object, including under secret-named keys', () => {
    const serialized = serializeError({
      request: { headers: { Authorization: 'Bearer abc', 'x-api-key': 'k' } },
    });
    expect(serialized.message).toBe(
      `{"request":{"headers":{"Authorization":"${REDACTED}","x-api-key":"${REDACTED}"}}}`,
    );
  });

  it('survives a cyclic thrown object and throwing getters', () => {
    const cyclic: Record<string, unknown> = { name: 'x' };
    cyclic.self = cyclic;
    expect(serializeError(cyclic).message).toBe('{"name":"x","self":"[cycle]"}');
    const hostile = new Error('hostile');
    Object.defineProperty(hostile, 'cause', {
      get() {
        throw new Error('gotcha');
      },
    });
    expect(serializeError(hostile)).toEqual({ name: 'Error', message: 'hostile' });
  });

  it('redacts messages, guidance and data, dropping values under secret keys whole', () => {
    const error = new KeelError('provider.auth', 'rejected', {
      guidance: 'rotate sk-abcdefghijklmnopqrstuvwxyz123456',
      data: {
        headers: {
          authorization: 'Bearer sk-abcdefghijklmnopqrstuvwxyz123456',
          'content-type': 'application/json',
        },
        url: 'postgres://keel:hunter2@db:5432/keel',
        note: 'x-api-key: abc',
        apiKey: 'plain',
        model: 'gpt-4o',
      },
    });
    const serialized = error.toJSON();
    expect(serialized.guidance).toBe(`rotate ${REDACTED}`);
    expect(serialized.data).toEqual({
      headers: { authorization: REDACTED, 'content-type': 'application/json' },
      url: `postgres://keel:${REDACTED}@db:5432/keel`,
      note: `x-api-key: ${REDACTED}`,
      apiKey: REDACTED,
      model: 'gpt-4o',
    });
    expect(JSON.stringify(error)).not.toMatch(/hunter2|abcdefghijklmnop|plain/);
  });

  it('turns data that is not JSON into JSON', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.again = cyclic;
    const error = new KeelError('tool.failed', 'x', {
      data: {
        when: new Date('2025-01-01T00:00:00Z'),
        big: 12n,
        cause: new Error('inner'),
        infinite: Number.POSITIVE_INFINITY,
        fn: () => 1,
        cyclic,
      } as never,
    });
    expect(JSON.parse(JSON.stringify(error)).data).toEqual({
      when: '2025-01-01T00:00:00.000Z',
      big: '12',
      cause: 'Error: inner',
      infinite: 'Infinity',
      cyclic: { again: '[cycle]' },
    });
  });
});

describe('deserializeError', () => {
  it('tolerates malformed input read back from storage', () => {
    expect(deserializeError(null as never).message).toMatch(/Not a serialised error/);
    const loose = deserializeError({
      name: 7,
      message: 8,
      code: 'provider.overloaded',
      data: [1],
      retryAfterMs: 'x',
    } as never);
    expect(loose).toMatchObject({ code: 'provider.overloaded', message: '', retryAfterMs: undefined });
    expect((loose as KeelError).data).toEqual({});
  });

  it('does not follow a cause chain deeper than a serialised one can be', () => {
    let serialized: SerializedError = { name: 'Error', message: 'root' };
    for (let index = 0; index < 1_000; index++)
      serialized = { name: 'Error', message: `${index}`, cause: serialized };
    let error: unknown = deserializeError(serialized);
    let depth = 0;
    while ((error as Error | undefined)?.cause !== undefined) {
      error = (error as Error).cause;
      depth++;
    }
    expect(depth).toBe(MAX_CAUSE_DEPTH);
  });
});
