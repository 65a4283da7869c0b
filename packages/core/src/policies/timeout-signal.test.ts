// The lifetime of the signal a timeout hands its function: born aborted when first read after the call was abandoned
// (timed out, cancelled), and left alive when the function settles in time, in both modes and through the lazy-signal
// protocol.
import { getEventListeners } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KeelError } from '../errors/keel-error.js';
import { FakeClock, flushMicrotasks } from '../testing/fake-clock.js';
import { constant } from './delays.js';
import { hedge } from './hedge.js';
import type { PolicyContext } from './policy.js';
import { retry } from './retry.js';
import { type TimeoutStrategy, timeout } from './timeout.js';

/** One turn of the event loop: a caller signal's shared listener and an idle deadline timer are let go there. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function track<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error) => Object.assign(state, { settled: true, error }),
  );
  return state;
}

/** Resolves after `delayMs` on the clock, ignoring any signal. */
function later(clock: FakeClock, delayMs: number): Promise<void> {
  return new Promise((resolve) => clock.setTimeout(resolve, delayMs));
}

const STRATEGIES: readonly TimeoutStrategy[] = ['cooperative', 'forced'];

describe('timeout: a signal first read after the call was abandoned is born aborted', () => {
  for (const strategy of STRATEGIES) {
    it(`${strategy}: read after the deadline, it carries the timeout error the caller received`, async () => {
      const clock = new FakeClock();
      const policy = timeout(100, { clock, strategy });
      let late: AbortSignal | undefined;
      const outcome = track(
        policy.execute(async (context) => {
          await later(clock, 150);
          late = context.signal;
          late.throwIfAborted();
          return 'unreachable';
        }),
      );
      await clock.advance(150);
      const error = outcome.error as KeelError;
      expect(error.code).toBe('policy.timeout');
      expect(late?.aborted).toBe(true);
      expect(late?.reason).toBe(error);
      expect(clock.pendingTimers).toBe(0);
    });

    it(`${strategy}: read after the caller aborted, it carries the caller's reason`, async () => {
      const clock = new FakeClock();
      const policy = timeout(1_000, { clock, strategy });
      const controller = new AbortController();
      let late: AbortSignal | undefined;
      const outcome = track(
        policy.execute(async (context) => {
          await later(clock, 10);
          late = context.signal;
          return 'ignored the abort';
        }, controller.signal),
      );
      await flushMicrotasks();
      controller.abort('user cancelled');
      await clock.advance(10);
      expect(late?.aborted).toBe(true);
      expect(late?.reason).toBe('user cancelled');
      if (strategy === 'forced') expect(outcome.error).toBe('user cancelled');
      await nextTurn();
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    });

    it(`${strategy}: read after the caller aborted through a lazy enclosing context, it carries that reason`, async () => {
      const clock = new FakeClock();
      const policy = timeout(1_000, { clock, strategy });
      const controller = new AbortController();
      let late: AbortSignal | undefined;
      // retry hands the timeout a lazy context: the caller's signal is only followed once somebody reads it.
      track(
        retry({ clock, maxAttempts: 1 }).execute(
          (attempt) =>
            policy.execute(async (context) => {
              await later(clock, 10);
              late = context.signal;
            }, attempt),
          controller.signal,
        ),
      );
      await flushMicrotasks();
      controller.abort('user cancelled');
      await clock.advance(10);
      expect(late?.reason).toBe('user cancelled');
    });

    it(`${strategy}: context.aborted agrees with the signal once the call has settled in time`, async () => {
      const clock = new FakeClock();
      const policy = timeout(100, { clock, strategy });
      let context: PolicyContext | undefined;
      await policy.execute((received) => {
        context = received;
        return 'done';
      });
      // A deadline passing after the call settled is no timeout.
      await clock.advance(200);
      expect(context?.aborted).toBe(false);
      expect(context?.signal.aborted).toBe(false);
    });
  }
});

describe('timeout: the signal is left alive when the function settles in time', () => {
  const endings = {
    resolves: async () => 'value',
    rejects: async () => {
      throw new KeelError('tool.failed', 'disk full');
    },
    'returns synchronously': () => 'value',
    'throws synchronously': () => {
      throw new KeelError('tool.failed', 'disk full');
    },
  };

  for (const strategy of STRATEGIES) {
    for (const [ending, finish] of Object.entries(endings)) {
      it(`${strategy}: a function that ${ending} keeps its signal unaborted, with nothing left pending`, async () => {
        const clock = new FakeClock();
        const policy = timeout(1_000, { clock, strategy });
        let seen: AbortSignal | undefined;
        const aborts: unknown[] = [];
        const outcome = track(
          policy.execute((context) => {
            seen = context.signal;
            seen.addEventListener('abort', () => aborts.push(seen?.reason));
            return finish();
          }),
        );
        await flushMicrotasks();
        expect(outcome.settled).toBe(true);
        expect(seen?.aborted).toBe(false);
        expect(clock.pendingTimers).toBe(0);
        // The deadline was dropped with the call: it aborts nothing later.
        await clock.advance(2_000);
        expect(aborts).toEqual([]);
      });
    }

    it(`${strategy}: work the function left behind gets the caller's signal when it first reads it`, async () => {
      const clock = new FakeClock();
      const policy = timeout(1_000, { clock, strategy });
      const caller = new AbortController();
      let leftover: Promise<AbortSignal> | undefined;
      const value = await policy.execute((context) => {
        // Started, not awaited: it outlives the call and only then reaches for the signal.
        leftover = later(clock, 10).then(() => context.signal);
        return 'value';
      }, caller.signal);
      expect(value).toBe('value');
      await clock.advance(10);
      const signal = await leftover!;
      expect(signal).toBe(caller.signal);
      expect(clock.pendingTimers).toBe(0);
    });

    it(`${strategy}: a call that timed out keeps the timeout error as its signal's reason after it settles`, async () => {
      const clock = new FakeClock();
      const policy = timeout(100, { clock, strategy });
      let seen: AbortSignal | undefined;
      const outcome = track(
        policy.execute(async (context) => {
          seen = context.signal;
          await later(clock, 200);
          return 'late';
        }),
      );
      await clock.advance(200);
      expect(KeelError.isInstance(seen?.reason) && seen.reason.code).toBe('policy.timeout');
      if (strategy === 'forced') expect(outcome.error).toBe(seen?.reason);
      else expect(outcome.value).toBe('late');
    });
  }

  it('creates no AbortController for a function that never reads its signal', async () => {
    const clock = new FakeClock();
    const callerController = new AbortController();
    const Original = globalThis.AbortController;
    let created = 0;
    globalThis.AbortController = class extends Original {
      constructor() {
        super();
        created++;
      }
    };
    try {
      for (const strategy of STRATEGIES) {
        const policy = timeout(1_000, { clock, strategy });
        await policy.execute(() => 'value', callerController.signal);
        await policy.execute(async () => 'value', callerController.signal);
        await policy
          .execute(async () => {
            throw new Error('failed');
          })
          .catch(() => undefined);
      }
    } finally {
      globalThis.AbortController = Original;
    }
    expect(created).toBe(0);
    await nextTurn();
    expect(getEventListeners(callerController.signal, 'abort')).toHaveLength(0);
    expect(clock.pendingTimers).toBe(0);
  });
});

describe('timeout: an abandoned attempt does not run beside the retry that replaced it', () => {
  let server: Server | undefined;
  afterEach(async () => {
    if (server === undefined) return;
    // fetch keeps connections alive: close them, or close() waits for their idle timeout.
    server.closeAllConnections();
    await new Promise((resolve) => server!.close(resolve));
    server = undefined;
  });

  const paths: string[] = [];
  async function startServer(): Promise<string> {
    paths.length = 0;
    server = createServer((request, response) => {
      paths.push(request.url ?? '');
      response.end('ok');
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it('forced: the attempt that timed out sends no request when it reaches fetch after the deadline', async () => {
    const url = await startServer();

    const clock = new FakeClock();
    const perAttempt = timeout(1_000, { clock, strategy: 'forced' });
    const policy = retry({ clock, maxAttempts: 2, delay: constant(0) });
    let abandoned: Promise<unknown> | undefined;
    const outcome = track(
      policy.execute((attempt) =>
        perAttempt.execute(async (context) => {
          // The first attempt's preparatory step hangs past the deadline; the second one's does not.
          if (context.attempt === 1) await later(clock, 2_000);
          const request = fetch(`${url}/attempt-${context.attempt}`, { signal: context.signal });
          if (context.attempt === 1) abandoned = request.catch((error: unknown) => error);
          return (await request).text();
        }, attempt),
      ),
    );
    await clock.advance(1_000);
    await expect.poll(() => outcome.settled).toBe(true);
    expect(outcome.value).toBe('ok');
    // The first attempt now wakes up and reaches for fetch with its signal, which must already be aborted.
    await clock.advance(1_000);
    await expect.poll(() => abandoned).toBeDefined();
    expect(((await abandoned) as KeelError).code).toBe('policy.timeout');
    expect(paths).toEqual(['/attempt-2']);
  });

  for (const strategy of STRATEGIES) {
    it(`${strategy}: a Response returned unread by retry(timeout(...)) can be read after the call`, async () => {
      const url = await startServer();
      const clock = new FakeClock();
      const perAttempt = timeout(5_000, { strategy, clock });
      const policy = retry({ clock, maxAttempts: 2, delay: constant(0) });
      const caller = new AbortController();
      const unread = await policy.execute(
        (attempt) => perAttempt.execute(({ signal }) => fetch(`${url}/unread`, { signal }), attempt),
        caller.signal,
      );
      await expect(unread.text()).resolves.toBe('ok');
      await nextTurn();
      expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
      expect(clock.pendingTimers).toBe(0);
    });
  }
});

describe('hedge: the winner’s Response stays readable', () => {
  let server: Server | undefined;
  afterEach(async () => {
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise((resolve) => server!.close(resolve));
    server = undefined;
  });

  it('the losing attempt is aborted, the winner’s body is read after the hedge returned', async () => {
    const stalled: ServerResponse[] = [];
    server = createServer((request, response) => {
      // The first request stalls (a slow replica); the hedged one answers at once.
      if (request.url === '/attempt-1') stalled.push(response);
      else response.end(`answer from ${request.url}`);
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const clock = new FakeClock();
    const policy = hedge({ delayMs: 100, clock });
    const signals: AbortSignal[] = [];
    let requests = 0;
    const outcome = track(
      policy.execute(({ signal }) => {
        signals.push(signal);
        requests++;
        return fetch(`${url}/attempt-${requests}`, { signal });
      }),
    );
    await expect.poll(() => stalled.length).toBe(1);
    await clock.advance(100);
    await expect.poll(() => outcome.settled).toBe(true);
    const response = outcome.value as Response;
    await expect(response.text()).resolves.toBe('answer from /attempt-2');
    expect(signals[0]!.aborted).toBe(true);
    expect(signals[1]!.aborted).toBe(false);
  });
});
