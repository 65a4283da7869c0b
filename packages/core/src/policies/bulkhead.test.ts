import { describe, expect, it } from 'vitest';
import { KeelError } from '../errors/keel-error.js';
import { flushMicrotasks } from '../testing/fake-clock.js';
import { bulkhead } from './bulkhead.js';
import type { PolicyContext } from './policy.js';

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((resolvePromise, rejectPromise) => {
    resolve = resolvePromise;
    reject = rejectPromise;
  });
  return { promise, resolve, reject };
}

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

describe('bulkhead', () => {
  it('validates its options with messages naming the option', () => {
    const bad = [
      [undefined, /options must be an object such as \{ maxConcurrent: 4 \}, got undefined/],
      [{ maxConcurrent: 0 }, /maxConcurrent must be an integer >= 1, got 0/],
      [{ maxConcurrent: 1.5 }, /maxConcurrent must be an integer >= 1, got 1.5/],
      [{}, /maxConcurrent must be an integer >= 1, got undefined/],
      [{ maxConcurrent: 1, maxQueued: -1 }, /maxQueued must be an integer >= 0 \(or Infinity\), got -1/],
      [{ maxConcurrent: 1, maxQueued: Number.NaN }, /maxQueued/],
    ] as const;
    for (const [options, message] of bad) {
      let caught: unknown;
      try {
        bulkhead(options as never);
      } catch (error) {
        caught = error;
      }
      expect(KeelError.isInstance(caught) && caught.code).toBe('config.invalid');
      expect((caught as Error).message).toMatch(message);
    }
    expect(bulkhead({ maxConcurrent: 1, maxQueued: Number.POSITIVE_INFINITY }).queued).toBe(0);
  });

  it('rejects an unknown option, naming it and the known ones', () => {
    let caught: unknown;
    try {
      bulkhead({ maxConcurrent: 4, maxQueue: 10 } as never);
    } catch (error) {
      caught = error;
    }
    expect(KeelError.isInstance(caught) && caught.code).toBe('config.invalid');
    expect((caught as KeelError).message).toBe(
      'Unknown bulkhead option maxQueue (known: maxConcurrent, maxQueued); did you mean maxQueued?',
    );
    expect((caught as KeelError).data).toMatchObject({ option: 'maxQueue' });
  });

  it('runs up to maxConcurrent calls and rejects the next with policy.bulkhead_full', async () => {
    const policy = bulkhead({ maxConcurrent: 2 });
    const gates = [deferred<string>(), deferred<string>()];
    const first = policy.execute(() => gates[0]!.promise);
    const second = policy.execute(() => gates[1]!.promise);
    expect(policy.executing).toBe(2);

    const error = await rejectionOf(policy.execute(() => 'never'));
    expect(KeelError.isInstance(error)).toBe(true);
    const keelError = error as KeelError;
    expect(keelError.code).toBe('policy.bulkhead_full');
    expect(keelError.retryable).toBe(true);
    expect(keelError.data).toEqual({ maxConcurrent: 2, maxQueued: 0 });

    gates[0]!.resolve('a');
    gates[1]!.resolve('b');
    await expect(first).resolves.toBe('a');
    await expect(second).resolves.toBe('b');
    expect(policy.executing).toBe(0);
    await expect(policy.execute(() => 'again')).resolves.toBe('again');
  });

  it('queues in arrival order and hands each freed slot to the oldest waiter', async () => {
    const policy = bulkhead({ maxConcurrent: 1, maxQueued: 3 });
    const started: string[] = [];
    const gates = new Map<string, ReturnType<typeof deferred<void>>>();
    const call = (name: string) => {
      gates.set(name, deferred());
      return policy.execute(() => {
        started.push(name);
        return gates.get(name)!.promise;
      });
    };
    const calls = ['a', 'b', 'c', 'd'].map(call);
    await flushMicrotasks();
    expect(started).toEqual(['a']);
    expect(policy.queued).toBe(3);

    gates.get('a')!.resolve();
    await flushMicrotasks();
    // A newcomer arriving while the slot is handed over must not jump the queue.
    const late = call('late');
    await flushMicrotasks();
    expect(started).toEqual(['a', 'b']);
    expect(policy.executing).toBe(1);
    expect(policy.queued).toBe(3);

    for (const name of ['b', 'c', 'd', 'late']) {
      gates.get(name)!.resolve();
      await flushMicrotasks();
    }
    await Promise.all([...calls, late]);
    expect(started).toEqual(['a', 'b', 'c', 'd', 'late']);
    expect(policy.executing).toBe(0);
    expect(policy.queued).toBe(0);
  });

  it('rejects when the queue is full and reports it to onRejected listeners', async () => {
    const policy = bulkhead({ maxConcurrent: 1, maxQueued: 1 });
    const events: unknown[] = [];
    const subscription = policy.onRejected((event) => events.push(event));
    const gate = deferred();
    const running = policy.execute(() => gate.promise);
    const waiting = policy.execute(() => 'queued');
    const error = await rejectionOf(policy.execute(() => 'no room'));
    expect((error as KeelError).code).toBe('policy.bulkhead_full');
    expect((error as KeelError).message).toMatch(/1 calls running and 1 waiting/);
    expect(events).toEqual([{ maxConcurrent: 1, maxQueued: 1 }]);

    subscription.dispose();
    await rejectionOf(policy.execute(() => 'no room'));
    expect(events).toHaveLength(1);
    gate.resolve();
    await running;
    await expect(waiting).resolves.toBe('queued');
  });

  it('frees the slot when the function throws or rejects, and passes the error on unchanged', async () => {
    const policy = bulkhead({ maxConcurrent: 1 });
    const thrown = new Error('sync');
    const rejected = new Error('async');
    await expect(
      policy.execute(() => {
        throw thrown;
      }),
    ).rejects.toBe(thrown);
    expect(policy.executing).toBe(0);
    await expect(policy.execute(() => Promise.reject(rejected))).rejects.toBe(rejected);
    expect(policy.executing).toBe(0);
  });

  it('removes an aborted waiter from the queue at once, with the signal reason', async () => {
    const policy = bulkhead({ maxConcurrent: 1, maxQueued: 1 });
    const gate = deferred();
    const running = policy.execute(() => gate.promise);
    const controller = new AbortController();
    let ran = false;
    const waiting = policy.execute(() => {
      ran = true;
    }, controller.signal);
    expect(policy.queued).toBe(1);

    const reason = new Error('caller gave up');
    controller.abort(reason);
    expect(policy.queued).toBe(0);
    await expect(waiting).rejects.toBe(reason);
    // Its queue place is free again.
    const next = policy.execute(() => 'next');
    expect(policy.queued).toBe(1);
    gate.resolve();
    await running;
    await expect(next).resolves.toBe('next');
    expect(ran).toBe(false);
  });

  it('is never starved by a queue full of aborted waiters', async () => {
    const policy = bulkhead({ maxConcurrent: 1, maxQueued: 3 });
    const gate = deferred();
    const running = policy.execute(() => gate.promise);
    const controllers = [new AbortController(), new AbortController(), new AbortController()];
    const abandoned = controllers.map((controller) => policy.execute(() => 'abandoned', controller.signal));
    expect(policy.queued).toBe(3);
    for (const controller of controllers) controller.abort(new Error('gone'));
    for (const call of abandoned) await expect(call).rejects.toThrow('gone');
    expect(policy.queued).toBe(0);

    // New callers fit in the queue again, and the slot goes to them rather than to the dead waiters.
    const started: number[] = [];
    const fresh = [1, 2, 3].map((index) =>
      policy.execute(() => {
        started.push(index);
        return index;
      }),
    );
    expect(policy.queued).toBe(3);
    gate.resolve();
    await running;
    await expect(Promise.all(fresh)).resolves.toEqual([1, 2, 3]);
    expect(started).toEqual([1, 2, 3]);
    expect(policy.executing).toBe(0);
  });

  it('passes the slot on when a waiter is aborted between the hand-off and its start', async () => {
    const policy = bulkhead({ maxConcurrent: 1, maxQueued: 2 });
    const gate = deferred();
    const running = policy.execute(() => gate.promise);
    const controller = new AbortController();
    let abortedRan = false;
    const handedOver = policy.execute(() => {
      abortedRan = true;
    }, controller.signal);
    const third = policy.execute(() => 'third');

    const reason = new Error('late abort');
    gate.resolve();
    // Runs after the running call releases its slot (and hands it over), before the waiter resumes.
    queueMicrotask(() => controller.abort(reason));
    await running;
    await expect(handedOver).rejects.toBe(reason);
    await expect(third).resolves.toBe('third');
    expect(abortedRan).toBe(false);
    expect(policy.executing).toBe(0);
  });

  it('does not read the context signal below the limit (lazy signal protocol)', async () => {
    const policy = bulkhead({ maxConcurrent: 1, maxQueued: 1 });
    let signalReads = 0;
    const context: PolicyContext = {
      get signal() {
        signalReads++;
        return new AbortController().signal;
      },
      aborted: false,
      attempt: 1,
    };
    const received: PolicyContext[] = [];
    await policy.execute((inner) => {
      received.push(inner);
    }, context);
    expect(signalReads).toBe(0);
    expect(received[0]).toBe(context);
  });
});
