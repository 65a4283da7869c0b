import { describe, expect, it } from 'vitest';
import { KeelError } from './keel-error.js';

describe('KeelError', () => {
  it('takes category and retryability from its code', () => {
    const error = new KeelError('provider.rate_limited', 'slow down', { retryAfterMs: 2000, status: 429 });
    expect(error.category).toBe('provider');
    expect(error.retryable).toBe(true);
    expect(error.retryAfterMs).toBe(2000);
    expect(KeelError.isInstance(error)).toBe(true);
    expect(error).toBeInstanceOf(Error);
  });

  it('is recognised by its brand across copies, when its fields are what a KeelError holds', () => {
    const foreign = {
      [Symbol.for('keel.error')]: true,
      code: 'tool.failed',
      category: 'tool',
      message: 'the tool failed',
      retryable: false,
      data: {},
      toJSON: () => ({ name: 'KeelError', message: 'the tool failed', code: 'tool.failed' }),
    };
    expect(KeelError.isInstance(foreign)).toBe(true);
    expect(KeelError.isInstance(new Error('x'))).toBe(false);
    // The brand alone is not enough: `classify` rebuilds such a value.
    expect(KeelError.isInstance({ [Symbol.for('keel.error')]: true, code: 'tool.failed' })).toBe(false);
    expect(KeelError.isInstance({ ...foreign, code: 'tool.teleported' })).toBe(false);
  });

  it('rejects an unknown code', () => {
    expect(() => new KeelError('nope' as never, 'x')).toThrow(/Unknown keel error code/);
  });

  it('round-trips through JSON with causes', () => {
    const root = new KeelError('network.connection', 'reset', { data: { code: 'ECONNRESET' } });
    const error = new KeelError('policy.retries_exhausted', 'gave up after 3 attempts', {
      data: { attempts: 3 },
      cause: root,
    });
    const copy = KeelError.fromJSON(JSON.parse(JSON.stringify(error)));
    expect(copy.code).toBe('policy.retries_exhausted');
    expect(copy.data).toEqual({ attempts: 3 });
    expect(KeelError.isInstance(copy.cause)).toBe(true);
    expect((copy.cause as KeelError).code).toBe('network.connection');
  });

  it('redacts secrets in its message', () => {
    const error = new KeelError('provider.auth', 'bad key sk-abcdefghijklmnopqrstuvwxyz012345');
    expect(error.message).not.toContain('sk-abcdefghijklmnop');
    expect(error.message).toContain('[redacted]');
  });
});
