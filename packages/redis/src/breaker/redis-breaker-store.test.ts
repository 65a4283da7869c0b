// Breakers of two processes (two RedisStates, each with its own connections) sharing one state in a real Redis, with
// a fake clock passed to the scripts (timeSource: 'clock'). Round trips are counted from Redis's MONITOR feed.
import {
  type BreakerTransition,
  type CircuitBreaker,
  circuitBreaker,
  consecutive,
  type KeelError,
} from '@keel/core';
import { FakeClock } from '@keel/core/testing';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { type RedisState, redisState } from '../redis-state.js';
import { type CommandMonitor, monitorCommands } from '../test-support/command-monitor.js';
import {
  fakeClockState,
  TEST_OPERATION_TIMEOUT_MS,
  testClient,
  testRedisUrl,
  uniqueNamespace,
} from '../test-support/test-redis.js';

const open: RedisState[] = [];
const monitors: CommandMonitor[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((state) => state.close()));
  await Promise.all(monitors.splice(0).map((monitor) => monitor.close()));
});

async function twoProcesses() {
  const namespace = uniqueNamespace('breaker-store');
  const clock = new FakeClock(1_000_000);
  const connect = () => fakeClockState(namespace, clock, open);
  const [first, second] = [await connect(), await connect()];
  const make = (state: RedisState, name = 'provider'): CircuitBreaker =>
    circuitBreaker({
      name,
      strategy: consecutive({ threshold: 2 }),
      halfOpenAfterMs: 1_000,
      probeTimeoutMs: 5_000,
      store: state.breakerStore(),
      clock,
    });
  const monitor = await monitorCommands(namespace);
  monitors.push(monitor);
  return { namespace, clock, first, second, make, monitor };
}

/** The next transition the breaker reports (from its own calls or from another process's message). */
function nextTransition(breaker: CircuitBreaker): Promise<BreakerTransition> {
  return new Promise((resolve) => {
    const subscription = breaker.onStateChange((transition) => {
      subscription.dispose();
      resolve(transition);
    });
  });
}

/** Resolves once the breaker has read its shared state (its first transition-free round trip is over). */
async function synced(breaker: CircuitBreaker): Promise<void> {
  await breaker.execute(() => 'warm-up');
}

/**
 * What ttlMs of idleness does to `key`: Redis's clock cannot be advanced, so a key that would expire within `ttlMs`
 * is expired now (one without an expiry stays).
 */
async function letTtlPass(client: Redis, key: string, ttlMs: number): Promise<void> {
  const remainingMs = await client.pttl(key);
  if (remainingMs >= 0 && remainingMs <= ttlMs) await client.pexpireat(key, 1);
}

const fail = () => {
  throw new Error('503 from upstream');
};

describe('redisBreakerStore', () => {
  it('admits a closed call from the local copy and reports it with one round trip', async () => {
    const { first, make, monitor } = await twoProcesses();
    const breaker = make(first);
    await synced(breaker);
    const before = (await monitor.settle()).length;
    for (let call = 0; call < 20; call++) await breaker.execute(() => call);
    const commands = (await monitor.settle()).slice(before);
    expect(commands).toHaveLength(20);
    expect(commands.every((command) => command.startsWith('evalsha '))).toBe(true);
  });

  it('opens in every process: the other one hears the transition, with the failure, and rejects without a round trip', async () => {
    const { first, second, make, monitor } = await twoProcesses();
    const a = make(first);
    const b = make(second);
    await synced(a);
    await synced(b);
    const heard = nextTransition(b);
    await expect(a.execute(fail)).rejects.toThrow('503');
    await expect(a.execute(fail)).rejects.toThrow('503');
    const transition = await heard;
    expect(transition).toMatchObject({
      from: 'closed',
      to: 'open',
      reason: 'failure-threshold',
      openForMs: 1_000,
    });
    expect((transition.error as Error).message).toContain('503 from upstream');
    const before = (await monitor.settle()).length;
    const rejection = await b.execute(() => 'never').catch((error: KeelError) => error);
    expect(rejection).toMatchObject({
      code: 'policy.circuit_open',
      data: { state: 'open', remainingMs: 1_000 },
    });
    expect((rejection as KeelError).cause).toBeInstanceOf(Error);
    expect((await monitor.settle()).slice(before)).toEqual([]);
    expect(b.state).toBe('open');
  });

  it('hands out one probe to the fleet when the period ends, and closes everywhere when it succeeds', async () => {
    const { first, second, make, clock } = await twoProcesses();
    const a = make(first);
    const b = make(second);
    await synced(a);
    await synced(b);
    await expect(a.execute(fail)).rejects.toThrow();
    const heard = nextTransition(b);
    await expect(a.execute(fail)).rejects.toThrow();
    await heard;
    await clock.advance(1_000);
    let probes = 0;
    let finishProbe!: () => void;
    let probeStarted!: () => void;
    const started = new Promise<void>((resolve) => (probeStarted = resolve));
    const probe = () => {
      probes++;
      probeStarted();
      return new Promise<string>((resolve) => (finishProbe = () => resolve('up')));
    };
    const running = a.execute(probe);
    await started;
    // `a` holds the fleet's only slot while its call runs: Redis refuses `b` one.
    const refused = await b.execute(probe).catch((error: KeelError) => error);
    expect(refused).toMatchObject({ code: 'policy.circuit_open', data: { state: 'half-open' } });
    expect(probes).toBe(1);
    const closed = nextTransition(b);
    finishProbe();
    await expect(running).resolves.toBe('up');
    expect(await closed).toMatchObject({ from: 'half-open', to: 'closed', reason: 'probe-succeeded' });
    expect([a.state, b.state]).toEqual(['closed', 'closed']);
  });

  it('frees a probe slot whose holder stopped renewing it soon after the half-open moment, not at the probe deadline', async () => {
    const { namespace, first, second, clock } = await twoProcesses();
    const third = await fakeClockState(namespace, clock, open);
    const make = (state: RedisState): CircuitBreaker =>
      circuitBreaker({
        name: 'provider',
        strategy: consecutive({ threshold: 2 }),
        halfOpenAfterMs: 1_000,
        // The model's timeout: a slot held to it would keep the fleet from probing for two minutes.
        probeTimeoutMs: 120_000,
        store: state.breakerStore(),
        clock,
      });
    const [a, b, c] = [make(first), make(second), make(third)];
    await Promise.all([synced(a), synced(b), synced(c)]);
    const heard = nextTransition(b);
    await expect(a.execute(fail)).rejects.toThrow();
    await expect(a.execute(fail)).rejects.toThrow();
    await heard;
    await clock.advance(1_000);
    const key = `keel:${namespace}:breaker:provider`;
    const client = testClient();
    /** Waits until Redis holds one probe slot whose lease `matches`. */
    const slotWhere = async (matches: (leaseUntilMs: number | undefined) => boolean) => {
      for (;;) {
        const probes = JSON.parse((await client.hget(key, 'probes')) ?? '[]') as number[][];
        if (probes.length === 1 && matches(probes[0]?.[2])) return;
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const leaseIs = (expectedMs: number) => slotWhere((leaseUntilMs) => leaseUntilMs === expectedMs);
    try {
      // `c` takes the slot and is gone (its admission's answer lost, or its process dead): nobody renews it.
      const hung = c.execute(() => new Promise<string>(() => undefined));
      await slotWhere(() => true);
      await third.close();
      hung.catch(() => undefined);
      expect(await b.execute(() => 'too early').catch((error: KeelError) => error.code)).toBe(
        'policy.circuit_open',
      );
      await clock.advance(3_000);
      // `a` takes the freed slot, and renews it while its probe runs: `b` is refused all along.
      let finishProbe!: () => void;
      const running = a.execute(() => new Promise<string>((resolve) => (finishProbe = () => resolve('up'))));
      const takenAtMs = clock.now();
      await leaseIs(takenAtMs + 3_000);
      for (let renewal = 1; renewal <= 6; renewal++) {
        await clock.advance(1_000);
        await leaseIs(takenAtMs + renewal * 1_000 + 3_000);
        expect(await b.execute(() => 'second probe').catch((error: KeelError) => error.code)).toBe(
          'policy.circuit_open',
        );
      }
      const closed = nextTransition(b);
      finishProbe();
      await expect(running).resolves.toBe('up');
      expect(await closed).toMatchObject({ to: 'closed', reason: 'probe-succeeded' });
    } finally {
      await client.quit();
    }
  });

  it('ignores the outcome of a call admitted before the breaker opened elsewhere', async () => {
    const { first, second, make, clock } = await twoProcesses();
    const a = make(first);
    const b = make(second);
    await synced(a);
    await synced(b);
    let failSlowCall!: () => void;
    const slow = b.execute(
      () => new Promise<never>((_, reject) => (failSlowCall = () => reject(new Error('late 503')))),
    );
    const heard = nextTransition(b);
    await expect(a.execute(fail)).rejects.toThrow();
    await expect(a.execute(fail)).rejects.toThrow();
    await heard;
    const moves: BreakerTransition[] = [];
    b.onStateChange((transition) => moves.push(transition));
    failSlowCall();
    await expect(slow).rejects.toThrow('late 503');
    await clock.advance(1_000);
    // Had the late failure counted as a probe failure or a new open, the breaker would not be half-open now.
    await expect(b.execute(() => 'probe')).resolves.toBe('probe');
    expect(moves.map(({ reason }) => reason)).toEqual(['open-elapsed', 'probe-succeeded']);
  });

  it('isolates, releases and resets the whole fleet', async () => {
    const { first, second, make } = await twoProcesses();
    const a = make(first);
    const b = make(second);
    await synced(a);
    await synced(b);
    let heard = nextTransition(b);
    const hold = await a.isolate();
    expect(await heard).toMatchObject({ from: 'closed', to: 'isolated', reason: 'isolated' });
    await expect(b.execute(() => 'x')).rejects.toMatchObject({ data: { state: 'isolated' } });
    heard = nextTransition(b);
    await hold.dispose();
    expect(await heard).toMatchObject({ to: 'closed', reason: 'isolation-released' });
    await expect(a.execute(fail)).rejects.toThrow();
    heard = nextTransition(b);
    await expect(a.execute(fail)).rejects.toThrow();
    await heard;
    heard = nextTransition(b);
    await a.reset();
    expect(await heard).toMatchObject({ from: 'open', to: 'closed', reason: 'reset' });
    await expect(b.execute(() => 'after reset')).resolves.toBe('after reset');
  });

  it('keeps an isolation however long it holds, with every call rejected locally; released, the state expires again', async () => {
    const namespace = uniqueNamespace('breaker-isolation');
    const clock = new FakeClock(1_000_000);
    const ttlMs = 10_000;
    const worker = async (): Promise<CircuitBreaker> =>
      circuitBreaker({
        name: 'provider',
        halfOpenAfterMs: 1_000,
        probeTimeoutMs: 5_000,
        store: (await fakeClockState(namespace, clock, open, ttlMs)).breakerStore(),
        clock,
      });
    const key = `keel:${namespace}:breaker:provider`;
    const client = testClient();
    const first = await worker();
    await synced(first);
    const hold = await first.isolate();
    // The isolated copy rejects without a round trip, so nothing of the first worker's refreshes the key meanwhile.
    await expect(first.execute(() => 'never')).rejects.toMatchObject({ data: { state: 'isolated' } });
    await letTtlPass(client, key, ttlMs);
    const started = await worker();
    let called = false;
    await expect(started.execute(() => (called = true))).rejects.toMatchObject({
      code: 'policy.circuit_open',
      data: { state: 'isolated' },
    });
    expect([called, started.state]).toEqual([false, 'isolated']);
    await hold.dispose();
    await letTtlPass(client, key, ttlMs);
    expect(await client.exists(key)).toBe(0);
    const later = await worker();
    await expect(later.execute(() => 'called')).resolves.toBe('called');
    await client.quit();
  });

  it('keeps the state under keel:<namespace>:breaker:<name>, with its TTL', async () => {
    const { namespace, first, make } = await twoProcesses();
    await synced(make(first, 'tool:get_weather'));
    const client = testClient();
    const key = `keel:${namespace}:breaker:tool:get_weather`;
    expect(await client.hget(key, 'state')).toBe('closed');
    expect(await client.pttl(key)).toBeGreaterThan(86_000_000);
    await client.quit();
  });

  it('seeds a missing shared state from initialState, and a later breaker takes the shared state over', async () => {
    const { first, second, clock } = await twoProcesses();
    const seeded = circuitBreaker({
      name: 'seeded',
      halfOpenAfterMs: 1_000,
      store: first.breakerStore(),
      clock,
      initialState: {
        version: 1,
        state: 'open',
        openUntilMs: clock.now() + 30_000,
        consecutiveOpens: 1,
        probeSuccesses: 0,
        strategy: 'consecutive',
        window: null,
        cause: { name: 'KeelError', message: 'upstream down', code: 'provider.server_error' } as never,
      },
    });
    await expect(seeded.execute(() => 'x')).rejects.toMatchObject({
      data: { state: 'open', remainingMs: 30_000 },
    });
    const later = circuitBreaker({
      name: 'seeded',
      halfOpenAfterMs: 1_000,
      store: second.breakerStore(),
      clock,
    });
    const moves: BreakerTransition[] = [];
    later.onStateChange((transition) => moves.push(transition));
    const rejection = await later.execute(() => 'x').catch((error: KeelError) => error);
    expect(rejection).toMatchObject({ code: 'policy.circuit_open', data: { state: 'open' } });
    expect((rejection as KeelError).cause).toMatchObject({ message: 'upstream down' });
    await second.ready();
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(moves.map(({ from, to, reason }) => `${from}>${to}:${reason}`)).toEqual([]);
  });

  it('refuses what Redis cannot run, with config.invalid', async () => {
    const { first, make } = await twoProcesses();
    expect(() =>
      circuitBreaker({
        name: 'custom',
        strategy: { kind: 'my-rule', options: {}, createWindow: consecutive().createWindow },
        store: first.breakerStore(),
      }),
    ).toThrow(
      /breakerStore: the Redis breaker store runs the consecutive, countWindow and timeWindow strategies; "my-rule"/,
    );
    const shortLived = redisState({
      url: testRedisUrl(),
      ttlMs: 60_000,
      operationTimeoutMs: TEST_OPERATION_TIMEOUT_MS,
    });
    open.push(shortLived);
    expect(() =>
      circuitBreaker({
        halfOpenAfterMs: { initialMs: 1_000, maxMs: 120_000 },
        store: shortLived.breakerStore(),
      }),
    ).toThrow(
      /ttlMs \(60000\) must outlast breaker "circuit-breaker"'s longest open period and probe \(121000 ms\)/,
    );
    expect(() => first.breakerStore({ onUnavailable: 'open' as never })).toThrow(
      /breakerStore: onUnavailable must be 'local' or 'closed', got "open"/,
    );
    expect(() => first.breakerStore({ onUnavalable: 'local' } as never)).toThrow(
      /did you mean onUnavailable/,
    );
    expect(make).toBeTypeOf('function');
  });

  it('survives a message on its channel that is not a breaker update, with a warning', async () => {
    const { namespace, first, make } = await twoProcesses();
    const breaker = make(first);
    await synced(breaker);
    const warned = new Promise<string>((resolve) =>
      process.once('warning', (warning) => resolve(warning.message)),
    );
    const client = testClient();
    await client.publish(`keel:${namespace}:breaker:provider`, 'not json');
    expect(await warned).toMatch(/a message on Redis channel keel:.*:breaker:provider could not be applied/);
    await client.quit();
    await expect(breaker.execute(() => 'still fine')).resolves.toBe('still fine');
  });
});
