import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KeelError } from '../errors/keel-error.js';
import { FakeClock } from '../testing/fake-clock.js';
import { bulkhead } from './bulkhead.js';
import { compose, noop } from './compose.js';
import { toContext } from './context.js';
import { fallback } from './fallback.js';
import { hedge } from './hedge.js';
import type { Policy, PolicyContext, PolicyFunction, SignalInput } from './policy.js';
import { rateLimiter } from './rate-limiter.js';

/** A policy that records when it is entered and left, and what signal input it received. */
function tracing(name: string, log: string[], inputs: SignalInput[] = []): Policy {
  return {
    async execute<T>(fn: PolicyFunction<T>, signal?: SignalInput): Promise<T> {
      inputs.push(signal);
      log.push(`${name} in`);
      try {
        return await fn(toContext(signal));
      } finally {
        log.push(`${name} out`);
      }
    },
  };
}

describe('compose', () => {
  const OriginalAbortController = globalThis.AbortController;
  let controllersCreated = 0;
  beforeEach(() => {
    controllersCreated = 0;
    globalThis.AbortController = class extends OriginalAbortController {
      constructor() {
        super();
        controllersCreated++;
      }
    };
  });
  afterEach(() => {
    globalThis.AbortController = OriginalAbortController;
  });

  it('runs the first policy outermost', async () => {
    const log: string[] = [];
    const policy = compose(tracing('outer', log), tracing('middle', log), tracing('inner', log));
    await expect(
      policy.execute(() => {
        log.push('fn');
        return 'result';
      }),
    ).resolves.toBe('result');
    expect(log).toEqual(['outer in', 'middle in', 'inner in', 'fn', 'inner out', 'middle out', 'outer out']);
    expect(policy.policies).toHaveLength(3);
  });

  it('hands each policy the context its outer policy created, never a signal', async () => {
    const log: string[] = [];
    const inputs: SignalInput[] = [];
    const controller = new OriginalAbortController();
    let received: PolicyContext | undefined;
    await compose(tracing('a', log, inputs), tracing('b', log, inputs)).execute((context) => {
      received = context;
    }, controller.signal);
    expect(inputs[0]).toBe(controller.signal);
    // The inner policy got the outer's context object, and the function the inner's.
    expect(inputs[1]).toBe(received);
    expect(received!.signal).toBe(controller.signal);
  });

  it('creates no AbortController through a chain of policies when nobody reads a signal', async () => {
    const clock = new FakeClock();
    const policy = compose(
      fallback([() => 'fallback']),
      bulkhead({ maxConcurrent: 2 }),
      rateLimiter({ ratePerSecond: 100, clock }),
      hedge({ delayMs: 1_000, clock }),
    );
    await expect(policy.execute(() => 'ok')).resolves.toBe('ok');
    await expect(policy.execute(() => Promise.reject(new Error('x')))).resolves.toBe('fallback');
    expect(controllersCreated).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it('composes fallback with the others, rate-limit rejections included', async () => {
    const clock = new FakeClock();
    const policy = compose(
      fallback([{ when: (error) => error.code === 'policy.rate_limited', run: () => 'served from cache' }]),
      rateLimiter({ ratePerSecond: 1, bucketSize: 1, clock }),
    );
    await expect(policy.execute(() => 'live')).resolves.toBe('live');
    await expect(policy.execute(() => 'live')).resolves.toBe('served from cache');
  });

  it('is noop with no policies, and noop runs the function with the caller’s context', async () => {
    const controller = new OriginalAbortController();
    const empty = compose();
    let received: PolicyContext | undefined;
    await expect(
      empty.execute((context) => {
        received = context;
        return 7;
      }, controller.signal),
    ).resolves.toBe(7);
    expect(received!.signal).toBe(controller.signal);
    expect(empty.policies).toEqual([]);
    const context = toContext(controller.signal);
    await noop.execute((inner) => {
      received = inner;
    }, context);
    expect(received).toBe(context);
    const failure = new Error('x');
    await expect(noop.execute(() => Promise.reject(failure))).rejects.toBe(failure);
  });

  it('rejects arguments that are not policies, naming their position', () => {
    let caught: unknown;
    try {
      compose(noop, {} as Policy);
    } catch (error) {
      caught = error;
    }
    expect(KeelError.isInstance(caught) && caught.code).toBe('config.invalid');
    expect((caught as Error).message).toMatch(/argument 2 is not a policy/);
  });

  it('types its result with every fallback’s alternative', async () => {
    const plain: Policy = compose(noop, bulkhead({ maxConcurrent: 1 }));
    const withFallbacks = compose(noop, fallback([() => 'text']), fallback([() => false]));
    const result: number | string | boolean = await withFallbacks.execute(() => 1);
    expect(result).toBe(1);
    // @ts-expect-error: a fallback may answer with a string or a boolean
    const narrow: number = await withFallbacks.execute(() => 1);
    expect(narrow).toBe(1);
    const nested: Policy = compose(plain, compose(noop));
    await expect(nested.execute(() => 'nested')).resolves.toBe('nested');
  });
});
