import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { HOSTILE_VALUES, newerKeelError } from '../testing/hostile-values.js';
import { classify, createClassifier } from './classify.js';
import { isErrorCode } from './codes.js';
import { isControlSignal } from './control.js';
import { errorChain, messageOf } from './error-chain.js';
import { KeelError } from './keel-error.js';
import { redactSecrets } from './redact.js';
import { createRedactor } from './redactor.js';
import { deserializeError, serializeError } from './serialize.js';

/** A KeelError made here, whose every field is what its type says. */
function expectWellFormed(error: KeelError): void {
  expect(error).toBeInstanceOf(KeelError);
  expect(isErrorCode(error.code)).toBe(true);
  expect(typeof error.message).toBe('string');
  expect(typeof error.retryable).toBe('boolean');
  expect(JSON.parse(JSON.stringify(error))).toMatchObject({ name: 'KeelError', code: error.code });
  expect(typeof inspect(error)).toBe('string');
}

describe.each(HOSTILE_VALUES)('$name', ({ make }) => {
  it('is classified into a well-formed KeelError, thrown alone or as a cause', () => {
    expectWellFormed(classify(make()));
    expectWellFormed(classify(make(), { provider: 'openai', nowMs: 0 }));
    expectWellFormed(classify(new Error('fetch failed', { cause: make() })));
    expectWellFormed(classify(new AggregateError([make(), make()], 'all failed')));
    expectWellFormed(createClassifier({ provider: 'anthropic' })(make()));
  });

  it('is classified as the caller’s cancellation when it is its signal’s reason', () => {
    const controller = new AbortController();
    const reason = make();
    controller.abort(reason);
    const error = classify(reason, { signal: controller.signal });
    expectWellFormed(error);
    expect(error.code).toBe('run.cancelled');
  });

  it('is serialised, and so is a KeelError caused by it, without throwing', () => {
    for (const value of [make(), new Error('outer', { cause: make() })]) {
      const serialized = serializeError(value);
      expect(typeof serialized.name).toBe('string');
      expect(typeof serialized.message).toBe('string');
      expect(typeof JSON.stringify(serialized)).toBe('string');
    }
    const wrapped = new KeelError('tool.failed', 'the tool failed', { cause: make() });
    expect(wrapped.toJSON().cause).toBeDefined();
    expect(typeof JSON.stringify(wrapped)).toBe('string');
    expect(typeof inspect(wrapped)).toBe('string');
  });

  it('is no KeelError this keel knows, nor a control signal, and reading it never throws', () => {
    const value = make();
    expect(KeelError.isInstance(value)).toBe(false);
    expect(isControlSignal(value)).toBe(false);
    expect(typeof messageOf(value)).toBe('string');
    expect(errorChain(value).length).toBeGreaterThan(0);
    expect(redactSecrets(value as string)).toBe(value);
  });

  it('is copied by a provider redactor, alone and as a cause, into values that can be logged', () => {
    const redactor = createRedactor(['gsk_0123456789abcdefghij']);
    for (const value of [make(), new Error('outer', { cause: make() }), classify(make())]) {
      const copy = redactor.error(value);
      expect(typeof inspect(copy)).toBe('string');
      expect(typeof JSON.stringify(serializeError(copy))).toBe('string');
    }
  });

  it('is rebuilt into an error when read back as a serialised error', () => {
    expect(deserializeError(make() as never)).toBeInstanceOf(Error);
    expectWellFormed(KeelError.fromJSON(make() as never));
  });
});

describe('a KeelError from a newer keel', () => {
  it('keeps what this keel can read: its message, status, provider, data and retryability, and its unknown code', () => {
    const error = classify(newerKeelError());
    expect(error.code).toBe('internal.unexpected');
    expect(error.message).toBe('the provider teleported the request');
    expect(error.retryable).toBe(false);
    expect(error.status).toBe(418);
    expect(error.provider).toBe('future');
    expect(error.guidance).toBe('Upgrade keel.');
    expect(error.data).toMatchObject({
      hops: 3,
      unknownCode: 'provider.teleported',
      rule: 'foreign-keel-error',
    });
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('is retried when it says it is retryable, with the wait it asks for', () => {
    const newer = Object.assign(newerKeelError(), { retryable: true, retryAfterMs: 250 });
    const error = classify(newer);
    expect(error.retryable).toBe(true);
    expect(error.retryAfterMs).toBe(250);
  });
});

describe('a KeelError of another copy of keel', () => {
  it('is used as it is when every field is well formed', () => {
    const original = new KeelError('provider.overloaded', 'busy', { data: { region: 'eu' } });
    const copy = Object.assign(Object.create(Error.prototype) as object, {
      ...original,
      [Symbol.for('keel.error')]: true,
      name: 'KeelError',
      message: 'busy',
      toJSON: () => original.toJSON(),
    });
    expect(KeelError.isInstance(copy)).toBe(true);
    expect(classify(copy)).toBe(copy);
  });
});
