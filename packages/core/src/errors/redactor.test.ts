import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { classify } from './classify.js';
import { KeelError } from './keel-error.js';
import { REDACTED } from './redact.js';
import { createRedactor, MIN_SECRET_CHARS } from './redactor.js';
import { MAX_CAUSE_DEPTH, serializeError } from './serialize.js';

const GROQ = 'gsk_8fQzK2mXw9LpR4vT7yN1bC6dH3jE5aS0uI8oP2qW4eR6tY9uXz';
const HEX = '9f86d081884c7d659a2feaa0c55ad015';
const SHORT = 'sk-4f9Qz1';

function everywhere(value: unknown): string {
  return [
    inspect(value, { depth: 20, showHidden: true }),
    JSON.stringify(value),
    JSON.stringify(serializeError(value)),
  ].join('\n');
}

describe('createRedactor: text', () => {
  const redactor = createRedactor([GROQ, HEX, SHORT, undefined, null, '']);

  it('removes each known secret literally, whatever its shape', () => {
    expect(redactor.text(`keys ${GROQ}, ${HEX} and ${SHORT}.`)).toBe(
      `keys ${REDACTED}, ${REDACTED} and ${REDACTED}.`,
    );
  });

  it('still applies the credential patterns', () => {
    expect(redactor.text('token=abc123def')).toBe(`token=${REDACTED}`);
  });

  it('finds a secret URL-encoded and JSON-escaped, and a Bearer value by its credential alone', () => {
    const odd = 'p@ss/wo"rd+key';
    const oddRedactor = createRedactor([odd, 'Bearer abcdefgh12345678']);
    expect(oddRedactor.text(`url ?k=${encodeURIComponent(odd)}`)).toBe(`url ?k=${REDACTED}`);
    expect(oddRedactor.text(JSON.stringify({ k: odd }))).toBe(`{"k":"${REDACTED}"}`);
    expect(oddRedactor.text('echo abcdefgh12345678')).toBe(`echo ${REDACTED}`);
  });

  it(`skips secrets shorter than ${MIN_SECRET_CHARS} characters, which ordinary words contain`, () => {
    expect(createRedactor(['ollama', 'EMPTY']).text('ollama said EMPTY')).toBe('ollama said EMPTY');
  });

  it('removes a secret containing another whole', () => {
    const inner = 'abcdefgh1234';
    expect(createRedactor([inner, `${inner}5678`]).text(`x ${inner}5678 y`)).toBe(`x ${REDACTED} y`);
  });
});

describe('createRedactor: error', () => {
  const redactor = createRedactor([GROQ]);

  it('copies a KeelError with every field kept and every trace of the secret gone', () => {
    const body = JSON.stringify({ error: { message: `bad key ${GROQ}` } });
    const headers = new Headers({ 'x-echo': GROQ, 'set-cookie': 'a=b', 'retry-after': '2' });
    const exchange = Object.assign(new Error(`HTTP 429 for ${GROQ}`), {
      status: 429,
      headers,
      body,
      bytes: new TextEncoder().encode(`raw ${GROQ}`),
    });
    const original = new KeelError('provider.rate_limited', `limited: ${GROQ}`, {
      retryAfterMs: 2_000,
      status: 429,
      provider: 'groq',
      guidance: `wait, ${GROQ}`,
      data: { nested: { list: [`x ${GROQ}`] }, apiKey: 'anything' },
      cause: new TypeError(`wrapped ${GROQ}`, { cause: exchange }),
    });
    const copy = redactor.error(original);
    expect(copy).not.toBe(original);
    expect(KeelError.isInstance(copy)).toBe(true);
    expect(copy).toMatchObject({
      code: 'provider.rate_limited',
      retryable: true,
      retryAfterMs: 2_000,
      status: 429,
      provider: 'groq',
      message: `limited: ${REDACTED}`,
      guidance: `wait, ${REDACTED}`,
      data: { nested: { list: [`x ${REDACTED}`] }, apiKey: REDACTED },
    });
    expect(copy.stack).toContain(`limited: ${REDACTED}`);
    const cause = copy.cause as Error & { cause: Record<string, unknown> };
    expect(cause).toMatchObject({ name: 'TypeError', message: `wrapped ${REDACTED}` });
    expect(cause.cause).toMatchObject({
      message: `HTTP 429 for ${REDACTED}`,
      status: 429,
      headers: { 'x-echo': REDACTED, 'set-cookie': REDACTED, 'retry-after': '2' },
      body: JSON.stringify({ error: { message: `bad key ${REDACTED}` } }),
      bytes: `raw ${REDACTED}`,
    });
    expect(everywhere(copy)).not.toContain(GROQ);
    // The copy still classifies as the original did.
    expect(classify(copy.cause).code).toBe('provider.rate_limited');
  });

  it('keeps system codes and aggregate members on plain errors', () => {
    const socket = Object.assign(new Error(`connect ECONNREFUSED ${GROQ}`), { code: 'ECONNREFUSED' });
    const aggregate = new AggregateError([socket], 'all addresses failed');
    const copy = redactor.error(new Error('fetch failed', { cause: aggregate })) as Error;
    const members = (copy.cause as { errors: Error[] }).errors;
    expect(members[0]).toMatchObject({ code: 'ECONNREFUSED', message: `connect ECONNREFUSED ${REDACTED}` });
    expect(classify(copy).code).toBe('network.connection');
    expect(everywhere(copy)).not.toContain(GROQ);
  });

  it('redacts strings and plain objects in a chain, cuts cycles and caps the depth', () => {
    expect(redactor.error(`thrown ${GROQ}`)).toBe(`thrown ${REDACTED}`);
    expect(redactor.error({ error: { message: GROQ } })).toEqual({ error: { message: REDACTED } });
    const cyclic = new Error('a') as Error & { cause?: unknown };
    cyclic.cause = cyclic;
    expect(() => inspect(redactor.error(cyclic))).not.toThrow();
    let deep: Error = new Error(GROQ);
    for (let level = 0; level < MAX_CAUSE_DEPTH + 4; level++)
      deep = new Error(`level ${level}`, { cause: deep });
    const copy = redactor.error(deep);
    expect(everywhere(copy)).not.toContain(GROQ);
  });

  it('never throws on hostile values', () => {
    const throwing = new Error('getter');
    Object.defineProperty(throwing, 'status', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    for (const value of [throwing, proxy, new Error('x', { cause: proxy }), 10n, Symbol('s')]) {
      expect(() => redactor.error(value)).not.toThrow();
    }
    const forged = Object.assign(new Error(GROQ), {
      [Symbol.for('keel.error')]: true,
      code: 'provider.newer',
    });
    const copy = redactor.error(forged);
    expect(copy).toMatchObject({ code: 'internal.unexpected', message: REDACTED });
  });
});
