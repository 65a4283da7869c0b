import { PACE_MAX_CALL_MS } from '../governance/pace-governor.js';
import type { PaceStore } from '../store/index.js';
import { FakeClock } from './fake-clock.js';
import { describe, expect, it } from './vitest-functions.js';

/** One call of a {@link simulatePace} run: which store (process) asks, for whom, and when it first asks. */
interface SimulatedCall {
  readonly store: PaceStore;
  readonly tenant: string;
  readonly priority?: number;
  readonly arriveAtMs: number;
  /** Asks once, then never again (a cancelled run). */
  readonly abandons?: boolean;
}

const KEY = 'openai/gpt-test/default';

/**
 * Runs calls against pace stores on a virtual clock: each asks at its arrival, again after every wait it is told, and
 * ends (without headers) the moment it is admitted. Returns each call's admission time (undefined: never admitted),
 * by call index.
 */
async function simulatePace(
  calls: readonly SimulatedCall[],
  untilMs = 60_000,
): Promise<(number | undefined)[]> {
  const admittedAtMs: (number | undefined)[] = calls.map(() => undefined);
  let order = 0;
  const queue = calls.map((call, index) => ({ atMs: call.arriveAtMs, order: order++, index }));
  for (;;) {
    queue.sort((left, right) => left.atMs - right.atMs || left.order - right.order);
    const next = queue.shift();
    if (next === undefined || next.atMs > untilMs) return admittedAtMs;
    const call = calls[next.index]!;
    const waitMs = await call.store.admit({
      key: KEY,
      callId: `call-${next.index}`,
      tokens: 100,
      nowMs: next.atMs,
      tenant: call.tenant,
      priority: call.priority ?? 0,
    });
    if (waitMs === 0) {
      admittedAtMs[next.index] = next.atMs;
      await call.store.observe(KEY, undefined, next.atMs);
    } else if (call.abandons !== true) {
      expect(waitMs).toBeGreaterThan(0);
      queue.push({ atMs: next.atMs + waitMs, order: order++, index: next.index });
    }
  }
}

/** Teaches `store` a window of `limit` requests per second starting at 0, as a first answer's headers would. */
async function learnWindow(store: PaceStore, limit: number): Promise<void> {
  expect(
    await store.admit({ key: KEY, callId: 'first', tokens: 1, nowMs: 0, tenant: 'setup', priority: 0 }),
  ).toBe(0);
  await store.observe(
    KEY,
    { requestsLimit: limit, requestsRemaining: limit - 1, requestsResetInMs: 1_000 },
    0,
  );
}

/**
 * The behaviour every `PaceStore` must have (see `PaceStore` for the rule). `createStores` returns two stores over
 * one fresh shared state, as two processes of a fleet would hold (for a store in memory: the same one twice). Time is
 * passed explicitly (`nowMs`), so no clock is needed.
 *
 * @example
 *   paceStoreContract('memoryPaceStore', () => { const store = memoryPaceStore(); return [store, store]; });
 */
export function paceStoreContract(
  name: string,
  createStores: () => readonly [PaceStore, PaceStore] | Promise<readonly [PaceStore, PaceStore]>,
): void {
  describe(`PaceStore contract: ${name}`, () => {
    it('admits at once while nothing is known, and holds every call back while a Retry-After runs', async () => {
      const [one, two] = await createStores();
      const request = { key: KEY, callId: 'a', tokens: 10, nowMs: 0, tenant: 'default', priority: 0 };
      expect(await one.admit(request)).toBe(0);
      await one.observe(KEY, undefined, 5);
      await one.refused(KEY, 2_000, 10);
      expect(await two.admit({ ...request, callId: 'b', nowMs: 100 })).toBe(1_910);
      expect(await two.admit({ ...request, callId: 'b', nowMs: 2_010 })).toBe(0);
    });

    it("waits for the reset when the window's requests or tokens are spent", async () => {
      const [one, two] = await createStores();
      const request = { key: KEY, callId: 'a', tokens: 500, nowMs: 0, tenant: 'default', priority: 0 };
      expect(await one.admit(request)).toBe(0);
      await one.observe(KEY, { requestsRemaining: 0, requestsResetInMs: 1_000 }, 0);
      expect(await two.admit({ ...request, callId: 'b', nowMs: 10 })).toBe(990);
      expect(await two.admit({ ...request, callId: 'b', nowMs: 1_000 })).toBe(0);
      await two.observe(KEY, { tokensRemaining: 400, tokensResetInMs: 3_000 }, 1_000);
      // 500 estimated tokens do not fit in the 400 left: the call waits for the tokens' reset.
      expect(await one.admit({ ...request, callId: 'c', nowMs: 1_000 })).toBe(3_000);
      expect(await one.admit({ ...request, callId: 'c', tokens: 300, nowMs: 1_000 })).toBe(0);
    });

    it('spreads the requests left evenly over what is left of the window', async () => {
      const [one, two] = await createStores();
      const request = { key: KEY, callId: 'a', tokens: 1, nowMs: 0, tenant: 'default', priority: 0 };
      expect(await one.admit(request)).toBe(0);
      await one.observe(KEY, { requestsRemaining: 4, requestsResetInMs: 1_000 }, 0);
      expect(await one.admit({ ...request, callId: 'b' })).toBe(0);
      expect(await two.admit({ ...request, callId: 'c' })).toBe(250);
      expect(await two.admit({ ...request, callId: 'c', nowMs: 250 })).toBe(0);
    });

    it('never admits more calls in a window than it allows, from two processes sharing it', async () => {
      const [one, two] = await createStores();
      await learnWindow(one, 10);
      const calls = Array.from({ length: 60 }, (_, index) => ({
        store: index % 2 === 0 ? one : two,
        tenant: 'default',
        arriveAtMs: index * 7,
      }));
      const admitted = await simulatePace(calls);
      expect(admitted.every((atMs) => atMs !== undefined)).toBe(true);
      const perWindow = new Map<number, number>();
      // The first window holds the call that taught it.
      perWindow.set(0, 1);
      for (const atMs of admitted) {
        const window = Math.floor((atMs as number) / 1_000);
        perWindow.set(window, (perWindow.get(window) ?? 0) + 1);
      }
      for (const count of perWindow.values()) expect(count).toBeLessThanOrEqual(10);
      // All 60 (and the first) in 7 windows: the window's slots were used, not left idle.
      expect(Math.max(...perWindow.keys())).toBe(6);
    });

    it('gives tenants with waiting calls the slots in turns, and a tenant alone all of them', async () => {
      const [one, two] = await createStores();
      await learnWindow(one, 10);
      // 30 calls of a busy tenant first, then 5 of a quiet one: the quiet one is not left behind the busy one's queue.
      const busy = Array.from({ length: 30 }, (_, index) => ({
        store: one,
        tenant: 'busy',
        arriveAtMs: index,
      }));
      const quiet = Array.from({ length: 5 }, (_, index) => ({
        store: two,
        tenant: 'quiet',
        arriveAtMs: 50 + index,
      }));
      const admitted = await simulatePace([...busy, ...quiet]);
      const order = admitted
        .map((atMs, index) => ({ atMs: atMs as number, tenant: index < 30 ? 'busy' : 'quiet' }))
        .sort((left, right) => left.atMs - right.atMs)
        .map((entry) => entry.tenant);
      // After the first busy call (admitted before anyone waited), the two alternate while both have calls waiting.
      expect(order.slice(0, 12)).toEqual([
        'busy',
        'quiet',
        'busy',
        'quiet',
        'busy',
        'quiet',
        'busy',
        'quiet',
        'busy',
        'quiet',
        'busy',
        'busy',
      ]);
      // Alone, the busy tenant takes every slot: 9 left in the first window, 10 in each after.
      const alone = await createStores();
      await learnWindow(alone[0], 10);
      const times = await simulatePace(
        Array.from({ length: 19 }, (_, index) => ({
          store: alone[index % 2]!,
          tenant: 'busy',
          arriveAtMs: 0,
        })),
      );
      expect(times.filter((atMs) => (atMs as number) < 1_000)).toHaveLength(9);
      expect(times.filter((atMs) => (atMs as number) < 2_000)).toHaveLength(19);
    });

    it('admits a waiting call of higher priority first, and forgets a call that stopped asking', async () => {
      const [one, two] = await createStores();
      await learnWindow(one, 10);
      const low = Array.from({ length: 6 }, (_, index) => ({
        store: one,
        tenant: 'batch',
        arriveAtMs: index,
      }));
      const high = { store: two, tenant: 'batch', priority: 5, arriveAtMs: 10 };
      const admitted = await simulatePace([...low, high]);
      const firstLowAfterHigh = Math.min(...(admitted.slice(1, 6) as number[]));
      // The first low call went before anyone waited; the high one, arriving last, went next.
      expect(admitted[6]).toBeLessThan(firstLowAfterHigh);
      // A high-priority call that asked once and went away holds the others back only until its place lapses.
      const [three] = await createStores();
      await learnWindow(three, 10);
      const abandoned = await simulatePace([
        { store: three, tenant: 'batch', arriveAtMs: 0 },
        { store: three, tenant: 'batch', priority: 10, arriveAtMs: 1, abandons: true },
        { store: three, tenant: 'batch', arriveAtMs: 2 },
      ]);
      expect(abandoned[1]).toBeUndefined();
      expect(abandoned[2]).toBeGreaterThan(1_000);
      expect(abandoned[2]).toBeLessThan(3_000);
    });

    it('stops counting a call admitted but never observed once PACE_MAX_CALL_MS has passed', async () => {
      // A call admitted whose answer the store never hears (its process killed mid-call, its observe failed) lowers
      // what is thought left (remaining less the calls in flight) for PACE_MAX_CALL_MS at most, not for good.
      const [one, two] = await createStores();
      const clock = new FakeClock(0);
      const admit = (store: PaceStore, key: string, callId: string) =>
        store.admit({ key, callId, tokens: 1, nowMs: clock.now(), tenant: 'acme', priority: 0 });
      const oneLeft = { requestsRemaining: 1, requestsResetInMs: 10 * PACE_MAX_CALL_MS };
      for (const key of ['recent', 'lapsed']) expect(await admit(one, key, `${key}-lost`)).toBe(0);
      await clock.advance(PACE_MAX_CALL_MS - 1);
      // Still counted: the answer of `a` says 1 left, the lost call may take it. The fleet waits more, never less.
      expect(await admit(two, 'recent', 'recent-a')).toBe(0);
      await two.observe('recent', oneLeft, clock.now());
      expect(await admit(two, 'recent', 'recent-b')).toBeGreaterThan(0);
      await clock.advance(1);
      // Lapsed: the 1 left is free.
      expect(await admit(two, 'lapsed', 'lapsed-a')).toBe(0);
      await two.observe('lapsed', oneLeft, clock.now());
      expect(await admit(two, 'lapsed', 'lapsed-b')).toBe(0);
    });
  });
}
