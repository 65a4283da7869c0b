// The breaker's Lua script on a real Redis, with the time passed in (no clock is read): transitions, probe counting,
// stale tickets, isolation, restore rules, TTL and expiry, publishing; and a differential test against core's
// MemoryBreakerStore over seeded random sequences of calls.
import {
  type BreakerStrategy,
  type BreakerTransition,
  consecutive,
  countWindow,
  timeWindow,
} from '@keel/core';
import { type BreakerRules, type BreakerTicket, MemoryBreakerStore } from '@keel/core/store';
import { FakeClock } from '@keel/core/testing';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testClient, uniqueNamespace } from '../test-support/test-redis.js';
import { BREAKER_SCRIPT } from './breaker-script.js';
import { type BreakerUpdate, parseBreakerUpdate } from './breaker-update.js';

const TTL_MS = 60_000;
let client: Redis;
const namespace = uniqueNamespace('breaker-script');
let keys = 0;

beforeAll(() => {
  client = testClient();
  client.defineCommand('keelBreaker', { numberOfKeys: 1, lua: BREAKER_SCRIPT });
});
afterAll(() => client.quit());

type Rules = Omit<BreakerRules, 'strategy'> & { strategy: BreakerStrategy };

function rulesOf(overrides: Partial<Rules> = {}): Rules {
  return {
    strategy: consecutive({ threshold: 2 }),
    openDuration: { initialMs: 1_000, factor: 1, maxMs: 1_000 },
    halfOpenMaxProbes: 1,
    probeSuccessesToClose: 1,
    probeTimeoutMs: 5_000,
    ...overrides,
  };
}

/** The script on a key of its own, called at the times the test gives; `probeSlotTtlMs` leases probe slots. */
function breaker(overrides: Partial<Rules> & { probeSlotTtlMs?: number } = {}) {
  const { probeSlotTtlMs, ...ruleOverrides } = overrides;
  const rules = rulesOf(ruleOverrides);
  const key = `keel:${namespace}:breaker:b${keys++}`;
  const rulesJson = JSON.stringify({
    strategy: { kind: rules.strategy.kind, options: rules.strategy.options },
    openDuration: rules.openDuration,
    halfOpenMaxProbes: rules.halfOpenMaxProbes,
    probeSuccessesToClose: rules.probeSuccessesToClose,
    probeTimeoutMs: rules.probeTimeoutMs,
    ...(probeSlotTtlMs === undefined ? {} : { probeSlotTtlMs }),
  });
  const moves: string[] = [];
  let seedJson = '';
  let knownGen = '';
  const call = async (operation: string, nowMs: number, ...args: string[]): Promise<BreakerUpdate> => {
    const run = (client as unknown as Record<string, (...values: string[]) => Promise<string>>).keelBreaker!;
    const update = parseBreakerUpdate(
      await run.call(
        client,
        key,
        operation,
        String(nowMs),
        rulesJson,
        String(TTL_MS),
        seedJson,
        knownGen,
        ...args,
      ),
    );
    for (const move of update.transitions ?? [])
      moves.push(`${move.from}>${move.to}:${move.reason}@${move.atMs}`);
    return update;
  };
  const sync = (nowMs: number, seed = '') => {
    seedJson = seed;
    return call('sync', nowMs);
  };
  const admit = (nowMs: number) => call('admit', nowMs);
  const report = (nowMs: number, ticket: { gen: number; probeId?: number }, outcome: string, cause = '') =>
    call(
      'report',
      nowMs,
      ticket.probeId === undefined ? 'closed' : 'probe',
      String(ticket.gen),
      String(ticket.probeId ?? ''),
      outcome,
      cause,
    );
  /** Admits a call and reports its outcome in one go, as a call that ends at once would. */
  const callThat = async (nowMs: number, outcome: string, cause = '') => {
    const admission = await admit(nowMs);
    if (admission.ticket === undefined) return admission;
    const probeId = admission.ticket.kind === 'probe' ? admission.ticket.probeId : undefined;
    return report(nowMs, { gen: admission.gen, probeId }, outcome, cause);
  };
  /** From now on, calls say their copy is at `gen` ('' for none). */
  const knowing = (gen: number | '') => {
    knownGen = String(gen);
  };
  return { key, sync, admit, report, callThat, moves, call, knowing };
}

describe('breaker script: transitions', () => {
  it('opens after threshold failures in a row, with the failure as cause; a success starts the count again', async () => {
    const b = breaker({ strategy: consecutive({ threshold: 3 }) });
    await b.callThat(1_000, 'failure');
    await b.callThat(1_000, 'failure');
    await b.callThat(1_000, 'success');
    await b.callThat(1_000, 'failure');
    await b.callThat(1_000, 'failure');
    expect(b.moves).toEqual([]);
    const opened = await b.callThat(1_100, 'failure', '{"message":"503"}');
    expect(b.moves).toEqual(['closed>open:failure-threshold@1100']);
    expect(opened).toMatchObject({ state: 'open', openUntil: 2_100, opens: 1, cause: '{"message":"503"}' });
    expect(opened.transitions![0]).toMatchObject({ openForMs: 1_000 });
    expect(await b.admit(1_600)).toMatchObject({ rejection: { state: 'open', remainingMs: 500 } });
  });

  it('waits for minimumCalls before opening', async () => {
    const b = breaker({ strategy: consecutive({ threshold: 1, minimumCalls: 3 }) });
    await b.callThat(0, 'failure');
    await b.callThat(0, 'failure');
    expect(b.moves).toEqual([]);
    await b.callThat(0, 'failure');
    expect(b.moves).toEqual(['closed>open:failure-threshold@0']);
  });

  it('opens a count window at the failure rate over a full window, and keeps only the newest outcomes', async () => {
    const b = breaker({ strategy: countWindow({ size: 4, failureRateThreshold: 0.5 }) });
    for (const outcome of ['failure', 'failure', 'success']) await b.callThat(0, outcome);
    expect(b.moves).toEqual([]);
    await b.callThat(0, 'success');
    // f f s s: 2 of 4 failed, but the rate is only checked on a failure.
    expect(b.moves).toEqual([]);
    await b.callThat(0, 'success');
    await b.callThat(0, 'success');
    // s s s s now; one failure makes s s s f: 1 of 4.
    await b.callThat(0, 'failure');
    expect(b.moves).toEqual([]);
    await b.callThat(0, 'failure');
    expect(b.moves).toEqual(['closed>open:failure-threshold@0']);
  });

  it('lets a time window forget failures older than the window', async () => {
    const b = breaker({
      strategy: timeWindow({ windowMs: 1_000, buckets: 10, failureRateThreshold: 0.5, minimumCalls: 3 }),
    });
    await b.callThat(0, 'failure');
    await b.callThat(0, 'failure');
    await b.callThat(1_500, 'failure');
    expect(b.moves).toEqual([]);
    await b.callThat(1_600, 'failure');
    await b.callThat(1_700, 'failure');
    expect(b.moves).toEqual(['closed>open:failure-threshold@1700']);
  });
});

describe('breaker script: probes', () => {
  it('goes half-open when the period ends, dated at its end, and hands out exactly halfOpenMaxProbes slots', async () => {
    const b = breaker({ halfOpenMaxProbes: 2, probeSuccessesToClose: 2 });
    await b.callThat(0, 'failure');
    await b.callThat(0, 'failure');
    const first = await b.admit(1_500);
    expect(b.moves).toEqual(['closed>open:failure-threshold@0', 'open>half-open:open-elapsed@1000']);
    const second = await b.admit(1_600);
    expect([first.ticket?.kind, second.ticket?.kind]).toEqual(['probe', 'probe']);
    const third = await b.admit(1_700);
    expect(third.rejection).toEqual({ state: 'half-open', remainingMs: 4_800 });
    expect(third).toMatchObject({ earliestProbe: 6_500, probesUntil: 6_600 });
    const firstProbe = first.ticket as { probeId: number };
    const freed = await b.report(1_800, { gen: first.gen, probeId: firstProbe.probeId }, 'success');
    expect(freed).toMatchObject({ state: 'half-open', probeSuccesses: 1, freed: true });
    const secondProbe = second.ticket as { probeId: number };
    await b.report(1_900, { gen: second.gen, probeId: secondProbe.probeId }, 'success');
    expect(b.moves.at(-1)).toBe('half-open>closed:probe-succeeded@1900');
  });

  it('reopens on a probe failure for longer each time, up to maxMs', async () => {
    const b = breaker({ openDuration: { initialMs: 1_000, factor: 3, maxMs: 5_000 } });
    await b.callThat(0, 'failure');
    const opened = await b.callThat(0, 'failure');
    let nowMs = opened.openUntil;
    const periods: number[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      const update = await b.callThat(nowMs, 'failure', '{"message":"still down"}');
      periods.push(update.transitions!.at(-1)!.openForMs!);
      nowMs = update.openUntil;
    }
    expect(periods).toEqual([3_000, 5_000, 5_000]);
    expect((await b.admit(nowMs - 1)).opens).toBe(4);
  });

  it('counts a probe that outlives probeTimeoutMs as failed, dated at its deadline, and ignores its late report', async () => {
    const b = breaker({ probeTimeoutMs: 2_000 });
    await b.callThat(0, 'failure');
    await b.callThat(0, 'failure');
    const probe = await b.admit(1_000);
    const ticket = { gen: probe.gen, probeId: (probe.ticket as { probeId: number }).probeId };
    // The deadline (3_000) passed, then the reopened period (1_000) too: half-open again by 4_500.
    const later = await b.admit(4_500);
    expect(b.moves.slice(2)).toEqual([
      'half-open>open:probe-timed-out@3000',
      'open>half-open:open-elapsed@4000',
    ]);
    expect(later.ticket?.kind).toBe('probe');
    await b.report(4_600, ticket, 'success');
    expect((await b.admit(4_700)).state).toBe('half-open');
  });

  it('frees a leased probe slot nobody renews soon after it was taken, and keeps one its holder renews', async () => {
    const b = breaker({ probeTimeoutMs: 120_000, probeSlotTtlMs: 500 });
    await b.callThat(0, 'failure');
    await b.callThat(0, 'failure');
    // An admission whose answer was lost: Redis gave the slot, nobody knows it.
    const lost = await b.admit(1_000);
    expect(lost.ticket?.kind).toBe('probe');
    expect(await b.admit(1_200)).toMatchObject({ rejection: { state: 'half-open', remainingMs: 300 } });
    // Its lease lapsed at 1_500: the slot is free again, with no transition (nobody was known to probe).
    const probe = await b.admit(1_500);
    expect(probe).toMatchObject({ state: 'half-open', ticket: { kind: 'probe' }, freed: true });
    const ticket = { gen: probe.gen, probeId: (probe.ticket as { probeId: number }).probeId };
    // Its holder renews it while the probe runs: held past its first lease, up to the last renewal's lease.
    expect(await b.call('renew', 1_900, 'probe', String(ticket.gen), String(ticket.probeId))).toMatchObject({
      renewed: true,
    });
    expect(await b.admit(2_100)).toMatchObject({ rejection: { state: 'half-open', remainingMs: 300 } });
    // The lost admission's slot is gone: a report of it counts for nothing.
    const stale = { gen: lost.gen, probeId: (lost.ticket as { probeId: number }).probeId };
    expect(await b.report(2_200, stale, 'failure')).toMatchObject({ state: 'half-open' });
    await b.report(2_300, ticket, 'success');
    expect(b.moves.slice(2)).toEqual(['half-open>closed:probe-succeeded@2300']);
    expect(b.moves).toHaveLength(3);
  });

  it('times a leased probe renewed to its deadline out as before; a renewal of a slot gone renews nothing', async () => {
    const b = breaker({ probeTimeoutMs: 1_000, probeSlotTtlMs: 600 });
    await b.callThat(0, 'failure');
    await b.callThat(0, 'failure');
    const probe = await b.admit(1_000);
    const renew = (nowMs: number) =>
      b.call(
        'renew',
        nowMs,
        'probe',
        String(probe.gen),
        String((probe.ticket as { probeId: number }).probeId),
      );
    // Renewed at 1_400: the lease would end at 2_000, but never past the deadline (2_000 too).
    expect(await renew(1_400)).toMatchObject({ renewed: true, earliestProbe: 2_000 });
    expect((await b.admit(2_000)).state).toBe('open');
    expect(b.moves.at(-1)).toBe('half-open>open:probe-timed-out@2000');
    expect((await renew(2_100)).renewed).toBeUndefined();
  });

  it('frees a slot without a transition when a probe is ignored or cancelled', async () => {
    const b = breaker();
    await b.callThat(0, 'failure');
    await b.callThat(0, 'failure');
    const probe = await b.admit(1_000);
    const freed = await b.report(
      1_100,
      { gen: probe.gen, probeId: (probe.ticket as { probeId: number }).probeId },
      'cancelled',
    );
    expect(freed).toMatchObject({ state: 'half-open', freed: true });
    expect(freed.transitions).toBeUndefined();
    expect((await b.admit(1_200)).ticket?.kind).toBe('probe');
  });

  it('ignores reports of closed tickets from an earlier generation', async () => {
    const b = breaker();
    const early = await b.admit(0);
    await b.callThat(0, 'failure');
    await b.callThat(0, 'failure');
    await b.report(0, { gen: early.gen }, 'failure');
    await b.report(0, { gen: early.gen }, 'success');
    expect(b.moves).toEqual(['closed>open:failure-threshold@0']);
    // Reset while closed moves the generation on without a transition: older tickets no longer count.
    const b2 = breaker();
    const before = await b2.admit(0);
    const reset = await b2.call('reset', 0);
    expect(reset.gen).toBe(before.gen + 1);
    await b2.report(0, { gen: before.gen }, 'failure');
    await b2.callThat(0, 'failure');
    expect(b2.moves).toEqual([]);
  });
});

describe('breaker script: answers to a copy that is behind', () => {
  it('lists every transition made since the generation the copy is at, not only its own', async () => {
    const b = breaker();
    const start = await b.admit(0);
    await b.callThat(0, 'failure');
    await b.callThat(0, 'failure');
    // Another process's admission made the breaker half-open and took the probe; this copy is still at `start`.
    await b.admit(1_000);
    b.knowing(start.gen);
    const answer = await b.admit(1_100);
    expect(answer.rejection?.state).toBe('half-open');
    expect(answer.transitions?.map(({ reason }) => reason)).toEqual(['failure-threshold', 'open-elapsed']);
    b.knowing(answer.gen);
    expect((await b.admit(1_200)).transitions).toBeUndefined();
  });
});

describe('breaker script: isolation and reset', () => {
  it('stays isolated until the last hold is released, and reset drops every hold', async () => {
    const b = breaker();
    await b.call('isolate', 0);
    await b.call('isolate', 0);
    expect((await b.admit(0)).rejection).toEqual({ state: 'isolated' });
    await b.call('release', 10);
    expect((await b.admit(10)).state).toBe('isolated');
    await b.call('release', 20);
    expect(b.moves).toEqual(['closed>isolated:isolated@0', 'isolated>closed:isolation-released@20']);
    await b.call('isolate', 30);
    await b.call('isolate', 30);
    await b.call('reset', 40);
    expect(b.moves.at(-1)).toBe('isolated>closed:reset@40');
    await b.call('release', 50);
    expect((await b.admit(50)).state).toBe('closed');
  });
});

/** A snapshot of a breaker in `state`, with no window and no cause, as the script's seed. */
function snapshotJson(state: string, openUntilMs: number | null): string {
  const snapshot = { version: 1, state, openUntilMs, consecutiveOpens: 1, probeSuccesses: 0 };
  return JSON.stringify({ ...snapshot, strategy: 'consecutive', window: null, cause: null });
}

describe('breaker script: restore, TTL and expiry', () => {
  it('seeds a missing state from a snapshot by core rules, and ignores the snapshot once a state exists', async () => {
    const b = breaker();
    const snapshot = {
      version: 1,
      state: 'half-open',
      openUntilMs: null,
      consecutiveOpens: 2,
      probeSuccesses: 0,
      strategy: 'consecutive',
      window: { failures: 0, calls: 0 },
      probesUntilMs: 3_000,
      cause: { name: 'KeelError', message: 'down', code: 'provider.server_error' },
    };
    const seeded = await b.sync(1_000, JSON.stringify(snapshot));
    // Probes of the snapshot's author may run until 3_000: open until then, quietly.
    expect(seeded).toMatchObject({ state: 'open', openUntil: 3_000, opens: 2 });
    expect(JSON.parse(seeded.cause!)).toMatchObject({ message: 'down' });
    expect(b.moves).toEqual([]);
    const again = await b.sync(
      1_100,
      JSON.stringify({ ...snapshot, state: 'isolated', probesUntilMs: null }),
    );
    expect(again.state).toBe('open');
    expect((await b.admit(3_000)).ticket?.kind).toBe('probe');
  });

  it('sets the TTL on every call and refreshes it on use', async () => {
    const b = breaker();
    await b.sync(0);
    expect(await client.pttl(b.key)).toBeGreaterThan(TTL_MS - 1_000);
    await client.pexpire(b.key, 5_000);
    await b.admit(0);
    expect(await client.pttl(b.key)).toBeGreaterThan(TTL_MS - 1_000);
  });

  it('keeps an isolated state without expiry until its last hold is released or it is reset', async () => {
    const b = breaker();
    await b.call('isolate', 0);
    await b.call('isolate', 0);
    expect(await client.pttl(b.key)).toBe(-1);
    await b.call('release', 10);
    await b.admit(10);
    expect(await client.pttl(b.key)).toBe(-1);
    await b.call('release', 20);
    expect(await client.pttl(b.key)).toBeGreaterThan(TTL_MS - 1_000);
    await b.call('isolate', 30);
    await b.call('reset', 40);
    expect(await client.pttl(b.key)).toBeGreaterThan(TTL_MS - 1_000);
    // A restored isolation (its holds belong to the snapshot's author) lasts until reset, so the same goes for it.
    const restored = breaker();
    await restored.sync(0, snapshotJson('isolated', null));
    await restored.admit(10);
    expect(await client.pttl(restored.key)).toBe(-1);
    await restored.call('reset', 20);
    expect(await client.pttl(restored.key)).toBeGreaterThan(TTL_MS - 1_000);
  });

  it('keeps an open state for the TTL after its period ends, however long the period', async () => {
    const b = breaker();
    // A snapshot saved under longer open periods than these rules (and the TTL) allow.
    await b.sync(0, snapshotJson('open', 3 * TTL_MS));
    expect(await client.pttl(b.key)).toBeGreaterThan(4 * TTL_MS - 1_000);
    expect((await b.admit(TTL_MS)).rejection?.state).toBe('open');
    expect(await client.pttl(b.key)).toBeGreaterThan(3 * TTL_MS - 1_000);
    expect((await b.admit(3 * TTL_MS)).ticket?.kind).toBe('probe');
    const remainingMs = await client.pttl(b.key);
    expect(remainingMs).toBeGreaterThan(TTL_MS - 1_000);
    expect(remainingMs).toBeLessThanOrEqual(TTL_MS);
  });

  it('starts a fresh closed state, of a newer generation, once the key has expired', async () => {
    const b = breaker();
    await b.callThat(1_000, 'failure');
    const opened = await b.callThat(1_000, 'failure');
    expect(opened.state).toBe('open');
    // An expiry time in the past expires the key at once.
    await client.pexpireat(b.key, 1);
    expect(await client.exists(b.key)).toBe(0);
    const fresh = await b.admit(2_000);
    expect(fresh).toMatchObject({ state: 'closed', ticket: { kind: 'closed' } });
    expect(fresh.gen).toBeGreaterThan(opened.gen);
  });

  it('publishes transitions and freed probe slots on a channel named like the key, and nothing else', async () => {
    const b = breaker();
    const listener = testClient();
    const messages: BreakerUpdate[] = [];
    listener.on('message', (_channel: string, message: string) => messages.push(parseBreakerUpdate(message)));
    await listener.subscribe(b.key);
    await b.callThat(0, 'success');
    await b.callThat(0, 'failure');
    await b.callThat(0, 'failure', '{"message":"x"}');
    const probe = await b.admit(1_000);
    await b.report(
      1_000,
      { gen: probe.gen, probeId: (probe.ticket as { probeId: number }).probeId },
      'ignored',
    );
    await client.ping();
    await listener.quit();
    expect(
      messages.map((message) => [message.state, message.transitions?.length ?? 0, message.freed]),
    ).toEqual([
      ['open', 1, undefined],
      ['half-open', 1, undefined],
      ['half-open', 0, true],
    ]);
    expect(messages[0]!.cause).toBe('{"message":"x"}');
  });
});

/** A seeded pseudo-random source (mulberry32), so that a failing sequence can be replayed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

describe('breaker script: same decisions as MemoryBreakerStore', () => {
  const strategies: Array<[string, BreakerStrategy]> = [
    ['consecutive', consecutive({ threshold: 3, minimumCalls: 4 })],
    ['count window', countWindow({ size: 6, failureRateThreshold: 0.5, minimumCalls: 4 })],
    ['time window', timeWindow({ windowMs: 2_000, buckets: 4, failureRateThreshold: 0.5, minimumCalls: 3 })],
  ];
  it.each(strategies)(
    '%s: 300 random calls, outcomes and waits give the same transitions and answers',
    async (_, strategy) => {
      for (const seed of [1, 2, 3]) {
        const random = seeded(seed);
        const rules = rulesOf({
          strategy,
          openDuration: { initialMs: 500, factor: 2, maxMs: 4_000 },
          halfOpenMaxProbes: 2,
          probeSuccessesToClose: 2,
          probeTimeoutMs: 700,
        });
        const clock = new FakeClock(10_000);
        const local: BreakerTransition[] = [];
        const memory = new MemoryBreakerStore({
          name: 'differential',
          rules,
          clock,
          initialState: undefined,
          onTransition: (transition) => local.push(transition),
        });
        const shared = breaker(rules);
        // Calls in flight: the in-memory ticket and the script's ticket of the same call.
        const running: Array<{ memory: BreakerTicket; shared: { gen: number; probeId?: number } }> = [];
        for (let step = 0; step < 300; step++) {
          const nowMs = clock.now();
          const roll = random();
          if (roll < 0.45 || (roll < 0.85 && running.length === 0)) {
            const expected = memory.admit();
            const actual = await shared.admit(nowMs);
            expect(actual.ticket?.kind ?? 'rejected', `seed ${seed} step ${step}`).toBe(expected.kind);
            if (expected.kind === 'rejected') {
              expect(actual.rejection?.state).toBe(expected.state);
              if (expected.remainingMs !== undefined)
                expect(actual.rejection?.remainingMs).toBe(expected.remainingMs);
            } else {
              const probeId = actual.ticket?.kind === 'probe' ? actual.ticket.probeId : undefined;
              running.push({ memory: expected, shared: { gen: actual.gen, probeId } });
            }
          } else if (roll < 0.85) {
            const index = Math.floor(random() * running.length);
            const [call] = running.splice(index, 1);
            const outcome = random() < 0.6 ? 'failure' : random() < 0.8 ? 'success' : 'ignored';
            memory.report(call!.memory, outcome);
            await shared.report(nowMs, call!.shared, outcome);
          } else {
            await clock.advance(Math.floor(random() * 600));
            memory.read();
            await shared.sync(clock.now());
          }
        }
        expect(shared.moves, `seed ${seed}`).toEqual(
          local.map(({ from, to, reason, atMs }) => `${from}>${to}:${reason}@${atMs}`),
        );
        expect(local.length).toBeGreaterThan(5);
      }
    },
  );
});
