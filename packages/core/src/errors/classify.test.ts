import { describe, expect, it } from 'vitest';
import { type ClassificationRule, classify, createClassifier } from './classify.js';
import { MAX_CHAIN_LINKS } from './error-chain.js';
import { KeelError } from './keel-error.js';

function systemError(code: string, message = `${code} happened`, name = 'Error'): Error {
  const error = Object.assign(new Error(message), { code });
  error.name = name;
  return error;
}

describe('classify: order of rules', () => {
  it('passes a KeelError through unchanged: the same object', () => {
    const original = new KeelError('tool.timeout', 'get_weather took too long', { data: { timeoutMs: 5 } });
    expect(classify(original)).toBe(original);
    expect(classify(original, { provider: 'openai' })).toBe(original);
  });

  it('lets a user rule win over every built-in rule, a KeelError included', () => {
    const rule: ClassificationRule = (error) =>
      (error as { status?: number }).status !== undefined
        ? { code: 'tool.unavailable', message: 'mapped' }
        : undefined;
    const input = { status: 429, headers: { 'retry-after': '5' } };
    const result = classify(input, { rules: [rule] });
    expect(result.code).toBe('tool.unavailable');
    expect(result.message).toBe('mapped');
    expect(result.data).toMatchObject({ rule: 'user', ruleIndex: 0 });
    expect(result.cause).toBe(input);

    const keel = new KeelError('tool.failed', 'x');
    expect(classify(keel, { rules: [() => ({ code: 'provider.overloaded' })] }).code).toBe(
      'provider.overloaded',
    );
  });

  it('tries user rules in order and falls through on undefined', () => {
    const seen: number[] = [];
    const rules: ClassificationRule[] = [
      () => {
        seen.push(0);
        return undefined;
      },
      (_error, context) => {
        seen.push(1);
        return {
          code: 'provider.overloaded',
          retryAfterMs: context.nowMs === 1_000 ? 42 : 0,
          data: { extra: true },
        };
      },
      () => {
        seen.push(2);
        return { code: 'tool.failed' };
      },
    ];
    const result = classify(new Error('model is loading'), { rules, nowMs: 1_000, provider: 'hf' });
    expect(seen).toEqual([0, 1]);
    expect(result).toMatchObject({ code: 'provider.overloaded', retryAfterMs: 42, provider: 'hf' });
    expect(result.data).toMatchObject({ extra: true, rule: 'user', ruleIndex: 1 });
    expect(result.message).toBe('model is loading');
  });

  it('uses a KeelError returned by a rule as it is', () => {
    const ready = new KeelError('guardrail.input', 'blocked');
    expect(classify(new Error('x'), { rules: [() => ready] })).toBe(ready);
  });

  it('reports a rule that throws or answers nonsense as config.invalid, keeping the evidence', () => {
    const thrown = new Error('rule bug');
    const broken = () => {
      try {
        classify(new Error('original fault'), {
          rules: [
            () => {
              throw thrown;
            },
          ],
        });
      } catch (error) {
        return error as KeelError;
      }
      throw new Error('expected classify to throw');
    };
    const error = broken();
    expect(error.code).toBe('config.invalid');
    expect(error.cause).toBe(thrown);
    expect(error.data).toMatchObject({ ruleIndex: 0, originalMessage: 'original fault' });
    expect(() => classify(new Error('x'), { rules: [() => ({ code: 'nope' }) as never] })).toThrow(
      /returned "nope", not a match/,
    );
    expect(() => classify(new Error('x'), { rules: [() => 'provider.overloaded' as never] })).toThrow(
      /returned string, not a match/,
    );
    expect(() =>
      classify(new Error('x'), { rules: [() => ({ code: 'tool.failed', retryAfterMs: -1 })] }),
    ).toThrow(/retryAfterMs -1: it must be a finite number >= 0/);
  });

  it('lets a typed cause win over a message pattern, and HTTP status over a system code', () => {
    const timeout = new DOMException('rate limit of patience reached', 'TimeoutError');
    expect(classify(timeout).code).toBe('network.timeout');
    const both = Object.assign(new Error('socket hang up'), { status: 503, headers: {}, code: 'ECONNRESET' });
    expect(classify(both)).toMatchObject({ code: 'provider.overloaded', status: 503 });
  });

  it('falls back to internal.unexpected with the original as cause', () => {
    const original = new RangeError('index out of range');
    const result = classify(original);
    expect(result).toMatchObject({
      code: 'internal.unexpected',
      retryable: false,
      message: 'index out of range',
    });
    expect(result.data.rule).toBe('fallback');
    expect(result.cause).toBe(original);
  });
});

describe('classify: typed causes', () => {
  it('a DOMException TimeoutError (AbortSignal.timeout) is network.timeout', () => {
    const result = classify(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
    expect(result).toMatchObject({ code: 'network.timeout', retryable: true });
    expect(result.data.rule).toBe('abort');
  });

  it('a DOMException AbortError is run.cancelled, never retryable', () => {
    const result = classify(new DOMException('This operation was aborted', 'AbortError'));
    expect(result).toMatchObject({ code: 'run.cancelled', retryable: false });
  });

  it('an AbortError deep in a cause chain is found', () => {
    const abort = new DOMException('This operation was aborted', 'AbortError');
    const wrapped = new Error('tool failed', { cause: new Error('request failed', { cause: abort }) });
    const result = classify(wrapped);
    expect(result.code).toBe('run.cancelled');
    expect(result.message).toBe('tool failed: This operation was aborted');
  });

  it("Node's AbortError caused by a TimeoutError reason is a timeout", () => {
    const reason = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    const abort = Object.assign(new Error('The operation was aborted', { cause: reason }), {
      code: 'ABORT_ERR',
    });
    abort.name = 'AbortError';
    expect(classify(abort).code).toBe('network.timeout');
  });

  it("the caller's signal: any reason it aborted with is a cancellation", () => {
    const controller = new AbortController();
    const reason = new Error('user closed the tab');
    controller.abort(reason);
    expect(classify(reason, { signal: controller.signal })).toMatchObject({
      code: 'run.cancelled',
      retryable: false,
    });
    expect(classify(new Error('wrapper', { cause: reason }), { signal: controller.signal }).code).toBe(
      'run.cancelled',
    );
    expect(classify('stop', { signal: AbortSignal.abort('stop') }).code).toBe('run.cancelled');
    // The same error with a signal that has not aborted is only what it says.
    expect(classify(reason, { signal: new AbortController().signal }).code).toBe('internal.unexpected');
  });

  it('a KeelError inside a cause chain gives its code, retryability and wait', () => {
    const inner = new KeelError('provider.rate_limited', 'slow down', { retryAfterMs: 900, status: 429 });
    const result = classify(new Error('step failed', { cause: inner }));
    expect(result).toMatchObject({ code: 'provider.rate_limited', retryAfterMs: 900, status: 429 });
    expect(result.data.rule).toBe('keel-error');
    expect(result.message).toBe('step failed: slow down');
  });
});

describe('classify: Node and undici system codes', () => {
  const cases: readonly [code: string, expected: string, retryable: boolean][] = [
    ['ECONNRESET', 'network.connection', true],
    ['ECONNREFUSED', 'network.connection', true],
    ['EPIPE', 'network.connection', true],
    ['EHOSTUNREACH', 'network.connection', true],
    ['EAI_AGAIN', 'network.connection', true],
    ['ENOTFOUND', 'network.connection', false],
    ['ETIMEDOUT', 'network.timeout', true],
    ['UND_ERR_CONNECT_TIMEOUT', 'network.timeout', true],
    ['UND_ERR_HEADERS_TIMEOUT', 'network.timeout', true],
    ['UND_ERR_BODY_TIMEOUT', 'network.timeout', true],
    ['UND_ERR_SOCKET', 'network.connection', true],
    ['UND_ERR_CLOSED', 'network.connection', true],
    ['CERT_HAS_EXPIRED', 'network.connection', false],
    ['ERR_INVALID_URL', 'config.invalid', false],
  ];
  it.each(cases)('%s is %s (retryable: %s)', (code, expected, retryable) => {
    const result = classify(systemError(code));
    expect(result).toMatchObject({ code: expected, retryable });
    expect(result.data).toMatchObject({ rule: 'system-code', systemCode: code });
  });

  it("finds the code in the cause of Node fetch's TypeError('fetch failed')", () => {
    const fetchError = new TypeError('fetch failed', { cause: systemError('ECONNRESET', 'read ECONNRESET') });
    const result = classify(fetchError);
    expect(result.code).toBe('network.connection');
    expect(result.message).toBe('fetch failed: read ECONNRESET');
    expect(result.cause).toBe(fetchError);
  });

  it('finds the code in the members of an AggregateError (happy eyeballs)', () => {
    const aggregate = new AggregateError([new Error('x'), systemError('ECONNREFUSED')], 'connect failed');
    expect(classify(new TypeError('fetch failed', { cause: aggregate })).data.systemCode).toBe(
      'ECONNREFUSED',
    );
  });

  it('gives guidance for a name that does not resolve', () => {
    expect(classify(systemError('ENOTFOUND', 'getaddrinfo ENOTFOUND api.opnai.com')).guidance).toMatch(
      /base URL/,
    );
  });

  it('ignores numeric and unknown codes', () => {
    expect(classify(Object.assign(new Error('odd'), { code: 20 })).code).toBe('internal.unexpected');
    expect(classify(systemError('E_SOMETHING_ELSE')).code).toBe('internal.unexpected');
  });
});

describe('classify: message patterns', () => {
  const cases: readonly [message: string, code: string][] = [
    ['Rate limit reached for gpt-4 in organization org-1', 'provider.rate_limited'],
    ['429 Too Many Requests', 'provider.rate_limited'],
    ['Model is overloaded, please retry', 'provider.overloaded'],
    ['Request timed out after 30000ms', 'network.timeout'],
    ['socket hang up', 'network.connection'],
    ["This model's maximum context length is 8192 tokens", 'provider.context_overflow'],
    ['context length exceeded', 'provider.context_overflow'],
    ['You exceeded your current quota, please check your plan', 'provider.quota_exhausted'],
    ['Your credit balance is too low to access the Anthropic API', 'provider.quota_exhausted'],
    ['Invalid API key', 'provider.auth'],
  ];
  it.each(cases)('%s -> %s', (message, code) => {
    const result = classify(new Error(message));
    expect(result.code).toBe(code);
    expect(result.data.rule).toBe('message');
  });

  it('reads a thrown string', () => {
    expect(classify('rate limit exceeded')).toMatchObject({
      code: 'provider.rate_limited',
      message: 'rate limit exceeded',
    });
  });

  it('takes a wait from a rate-limit message', () => {
    expect(classify(new Error('Rate limit reached. Please try again in 1.5s.')).retryAfterMs).toBe(1_500);
    expect(classify(new Error('Rate limited; retry after 3 seconds')).retryAfterMs).toBe(3_000);
  });
});

describe('classify: chains, cycles and values that are not errors', () => {
  it('survives a cause cycle', () => {
    const first = new Error('first') as Error & { cause?: unknown };
    const second = new Error('second', { cause: first });
    first.cause = second;
    expect(classify(first).code).toBe('internal.unexpected');
    const third = new Error('third', { cause: first });
    first.cause = new Error('wrapped', { cause: Object.assign(second, { code: 'ECONNRESET' }) });
    expect(classify(third).code).toBe('network.connection');
  });

  it('stops following a chain after MAX_CHAIN_LINKS links', () => {
    let error: unknown = systemError('ECONNRESET');
    for (let index = 0; index < MAX_CHAIN_LINKS + 5; index++)
      error = new Error(`level ${index}`, { cause: error });
    expect(classify(error).code).toBe('internal.unexpected');
    let shallow: unknown = systemError('ECONNRESET');
    for (let index = 0; index < 5; index++) shallow = new Error(`level ${index}`, { cause: shallow });
    expect(classify(shallow).code).toBe('network.connection');
  });

  it('survives a cause getter that throws', () => {
    const hostile = new Error('hostile');
    Object.defineProperty(hostile, 'cause', {
      get() {
        throw new Error('gotcha');
      },
    });
    expect(classify(hostile).code).toBe('internal.unexpected');
  });

  it.each([
    [undefined, 'undefined'],
    [null, 'null'],
    [42, '42'],
    [Symbol('boom'), 'Symbol(boom)'],
    [{ reason: 'custom' }, '{"reason":"custom"}'],
    [Object.create(null), '{}'],
  ])('classifies the thrown value %s as internal.unexpected', (value, message) => {
    const result = classify(value);
    expect(result.code).toBe('internal.unexpected');
    expect(result.message).toBe(message);
    expect(result.cause).toBe(value);
  });

  it('redacts secrets from the message it builds, and clips huge ones', () => {
    const result = classify(new Error('call failed with key sk-ant-api03-abcdefghijklmnopqrstuvwxyz'));
    expect(result.message).toBe('call failed with key [redacted]');
    expect(classify(new Error('x'.repeat(5_000))).message.length).toBeLessThanOrEqual(1_001);
  });
});

describe('classify: options', () => {
  it('records the provider and names it in the guidance', () => {
    const result = classify({ status: 429, headers: {} }, { provider: 'anthropic' });
    expect(result.provider).toBe('anthropic');
    expect(result.guidance).toMatch(/^anthropic is limiting/);
  });

  it.each([
    [{ provider: 42 }, /provider must be a string/],
    [{ nowMs: Number.NaN }, /nowMs must be a finite number/],
    [{ rules: 'x' }, /rules must be an array/],
    [{ rules: [42] }, /rules\[0\] must be a function/],
    [{ signal: {} }, /signal must be an AbortSignal/],
    [null, /options must be an object/],
  ])('rejects bad options %j with config.invalid', (options, message) => {
    expect(() => classify(new Error('x'), options as never)).toThrow(message);
    try {
      classify(new Error('x'), options as never);
    } catch (error) {
      expect((error as KeelError).code).toBe('config.invalid');
    }
  });
});

describe('createClassifier', () => {
  it('fixes options, lets a call override them, and tries per-call rules first', () => {
    const classifyHf = createClassifier({
      provider: 'huggingface',
      rules: [(error) => (String(error).includes('loading') ? { code: 'provider.overloaded' } : undefined)],
    });
    expect(classifyHf(new Error('model is loading'))).toMatchObject({
      code: 'provider.overloaded',
      provider: 'huggingface',
    });
    expect(classifyHf(new Error('x'), { provider: 'other' }).provider).toBe('other');
    const overridden = classifyHf(new Error('model is loading'), {
      rules: [() => ({ code: 'tool.failed' })],
    });
    expect(overridden.code).toBe('tool.failed');
  });

  it('validates its options up front', () => {
    expect(() => createClassifier({ rules: [null as never] })).toThrow(/rules\[0\] must be a function/);
  });
});
