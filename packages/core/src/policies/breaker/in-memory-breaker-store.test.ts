import { describe, expect, it } from 'vitest';
import { KeelError } from '../../errors/keel-error.js';
import { FakeClock } from '../../testing/fake-clock.js';
import type { BreakerRules, BreakerTicket, BreakerTransition } from './breaker-store.js';
import { consecutive } from './consecutive.js';
import { countWindow } from './count-window.js';
import { MemoryBreakerStore } from './in-memory-breaker-store.js';
import { type BreakerSnapshot, parseBreakerSnapshot } from './snapshot.js';

const START_MS = 1_000_000;

function setup(rules: Partial<BreakerRules> = {}, initialState?: BreakerSnapshot) {
  const clock = new FakeClock(START_MS);
  const transitions: BreakerTransition[] = [];
  const store = new MemoryBreakerStore({
    name: 'test',
    rules: {
      strategy: consecutive({ threshold: 2 }),
      openDuration: { initialMs: 1_000, factor: 1, maxMs: 1_000 },
      halfOpenMaxProbes: 1,
      probeSuccessesToClose: 1,
      probeTimeoutMs: 5_000,
      ...rules,
    },
    clock,
    initialState,
    onTransition: (transition) => transitions.push(transition),
  });
  const ticket = (): BreakerTicket => {
    const admission = store.admit();
    if (admission.kind === 'rejected')
      throw new Error(`expected a ticket, got a rejection in ${admission.state}`);
    return admission;
  };
  const trip = () => {
    store.report(ticket(), 'failure');
    store.report(ticket(), 'failure');
  };
  const moves = () => transitions.map(({ from, to, reason }) => `${from}>${to}:${reason}`);
  return { clock, store, transitions, ticket, trip, moves };
}

describe('MemoryBreakerStore', () => {
  it('hands out the same closed ticket to every call while closed (no allocation)', () => {
    const { store } = setup();
    const first = store.admit();
    store.report(first as BreakerTicket, 'success');
    expect(store.admit()).toBe(first);
  });

  it('opens when the strategy says so and rejects with the time left', async () => {
    const { store, trip, moves, clock, transitions } = setup();
    trip();
    expect(moves()).toEqual(['closed>open:failure-threshold']);
    expect(transitions[0]).toMatchObject({ atMs: START_MS, openForMs: 1_000 });
    await clock.advance(400);
    expect(store.admit()).toEqual({ kind: 'rejected', state: 'open', remainingMs: 600 });
  });

  it('ignores reports from tickets issued before the breaker opened', () => {
    const { store, ticket, trip, moves } = setup({ halfOpenMaxProbes: 1 });
    const early = ticket();
    trip();
    store.report(early, 'failure');
    store.report(early, 'success');
    expect(moves()).toEqual(['closed>open:failure-threshold']);
    expect(store.read().state).toBe('open');
  });

  it('becomes half-open when the open period ends, dated at its end', async () => {
    const { store, trip, moves, clock, transitions } = setup();
    trip();
    await clock.advance(1_500);
    expect(store.read().state).toBe('half-open');
    expect(moves()).toEqual(['closed>open:failure-threshold', 'open>half-open:open-elapsed']);
    expect(transitions[1]!.atMs).toBe(START_MS + 1_000);
  });

  it('admits exactly halfOpenMaxProbes probes and rejects the rest until a slot frees', async () => {
    const { store, trip, clock } = setup({ halfOpenMaxProbes: 2, probeSuccessesToClose: 2 });
    trip();
    await clock.advance(1_000);
    const first = store.admit();
    const second = store.admit();
    expect([first.kind, second.kind]).toEqual(['probe', 'probe']);
    expect(store.admit()).toEqual({ kind: 'rejected', state: 'half-open', remainingMs: 5_000 });
    store.report(first as BreakerTicket, 'success');
    expect(store.read().state).toBe('half-open');
    expect(store.admit().kind).toBe('probe');
  });

  it('closes after probeSuccessesToClose probe successes and forgets the old window', async () => {
    const { store, trip, clock, moves } = setup({ probeSuccessesToClose: 2 });
    trip();
    await clock.advance(1_000);
    store.report(store.admit() as BreakerTicket, 'success');
    expect(store.read().state).toBe('half-open');
    expect(store.read().probeSuccesses).toBe(1);
    store.report(store.admit() as BreakerTicket, 'success');
    expect(moves().at(-1)).toBe('half-open>closed:probe-succeeded');
    expect(store.read()).toMatchObject({ state: 'closed', consecutiveOpens: 0, window: { failures: 0 } });
  });

  it('reopens on a probe failure, for longer each time, up to maxMs', async () => {
    const { store, trip, clock, transitions } = setup({
      openDuration: { initialMs: 1_000, factor: 3, maxMs: 5_000 },
    });
    const error = new Error('still down');
    trip();
    for (const expectedMs of [3_000, 5_000, 5_000]) {
      await clock.advance(transitions.at(-1)!.openForMs!);
      store.report(store.admit() as BreakerTicket, 'failure', error);
      expect(transitions.at(-1)).toMatchObject({
        to: 'open',
        reason: 'probe-failed',
        openForMs: expectedMs,
        error,
      });
    }
    expect(store.read().consecutiveOpens).toBe(4);
  });

  it('counts a probe that never reports as failed at its deadline, and ignores its late report', async () => {
    const { store, trip, clock, moves, transitions } = setup({ probeTimeoutMs: 5_000 });
    trip();
    await clock.advance(1_000);
    const hung = store.admit() as BreakerTicket;
    expect(hung.kind).toBe('probe');
    await clock.advance(4_999);
    expect(store.admit()).toMatchObject({ kind: 'rejected', state: 'half-open', remainingMs: 1 });
    await clock.advance(1);
    expect(store.admit()).toEqual({ kind: 'rejected', state: 'open', remainingMs: 1_000 });
    expect(moves().at(-1)).toBe('half-open>open:probe-timed-out');
    expect(transitions.at(-1)!.atMs).toBe(START_MS + 6_000);
    store.report(hung, 'success');
    expect(store.read().state).toBe('open');
  });

  it('applies a probe timeout and the following open period in one step when both are overdue', async () => {
    const { store, trip, clock, moves } = setup({ probeTimeoutMs: 2_000 });
    trip();
    await clock.advance(1_000);
    store.admit();
    await clock.advance(60_000);
    expect(store.admit().kind).toBe('probe');
    expect(moves()).toEqual([
      'closed>open:failure-threshold',
      'open>half-open:open-elapsed',
      'half-open>open:probe-timed-out',
      'open>half-open:open-elapsed',
    ]);
  });

  it('treats a probe reporting after its deadline as timed out, even if nobody looked in between', async () => {
    const { store, trip, clock, moves } = setup({ probeTimeoutMs: 2_000 });
    trip();
    await clock.advance(1_000);
    const probe = store.admit() as BreakerTicket;
    await clock.advance(2_500);
    store.report(probe, 'success');
    expect(moves().at(-1)).toBe('half-open>open:probe-timed-out');
  });

  it.each(['ignored', 'cancelled'] as const)(
    'frees the probe slot on an %s outcome without counting it',
    async (outcome) => {
      const { store, trip, clock } = setup();
      trip();
      await clock.advance(1_000);
      store.report(store.admit() as BreakerTicket, outcome);
      expect(store.read()).toMatchObject({ state: 'half-open', probeSuccesses: 0 });
      expect(store.admit().kind).toBe('probe');
    },
  );

  it('does not count ignored or cancelled outcomes while closed', () => {
    const { store, ticket } = setup();
    store.report(ticket(), 'failure');
    store.report(ticket(), 'ignored');
    store.report(ticket(), 'cancelled');
    expect(store.read().window).toEqual({ failures: 1, calls: 1 });
  });

  it('stays isolated while any hold remains, then closes', () => {
    const { store, moves } = setup();
    store.isolate();
    store.isolate();
    expect(store.admit()).toEqual({ kind: 'rejected', state: 'isolated', remainingMs: undefined });
    store.releaseIsolation();
    expect(store.read().state).toBe('isolated');
    store.releaseIsolation();
    expect(store.read().state).toBe('closed');
    expect(moves()).toEqual(['closed>isolated:isolated', 'isolated>closed:isolation-released']);
  });

  it('does not go half-open while isolated, however long it waits', async () => {
    const { store, trip, clock } = setup();
    trip();
    store.isolate();
    await clock.advance(1_000_000);
    expect(store.admit()).toMatchObject({ kind: 'rejected', state: 'isolated' });
  });

  it('reset closes from any state, drops holds, and makes earlier tickets stale', () => {
    const { store, ticket, moves } = setup();
    const early = ticket();
    store.report(ticket(), 'failure');
    store.reset();
    store.report(early, 'failure');
    expect(store.read().window).toEqual({ failures: 0, calls: 0 });
    store.isolate();
    store.isolate();
    store.reset();
    expect(store.read().state).toBe('closed');
    expect(moves()).toEqual(['closed>isolated:isolated', 'isolated>closed:reset']);
  });

  it('restores from a snapshot, window included, and drops the window of another strategy', async () => {
    const first = setup();
    first.trip();
    await first.clock.advance(1_000);
    first.store.report(first.store.admit() as BreakerTicket, 'failure');
    const saved = JSON.parse(JSON.stringify(first.store.read()));
    expect(saved).toEqual({
      version: 1,
      state: 'open',
      openUntilMs: START_MS + 2_000,
      consecutiveOpens: 2,
      probeSuccesses: 0,
      strategy: 'consecutive',
      window: { failures: 0, calls: 0 },
      probesUntilMs: null,
      cause: null,
    });
    const restored = setup({}, saved);
    expect(restored.store.admit()).toEqual({ kind: 'rejected', state: 'open', remainingMs: 2_000 });

    const closed = setup(
      {},
      { ...saved, state: 'closed', openUntilMs: null, window: { failures: 1, calls: 1 } },
    );
    closed.store.report(closed.ticket(), 'failure');
    expect(closed.store.read().state).toBe('open');
    const otherStrategy = setup(
      { strategy: countWindow({ size: 2 }) },
      { ...saved, state: 'closed', openUntilMs: null, window: { failures: 1, calls: 1 } },
    );
    expect(otherStrategy.store.read().window).toEqual({ outcomes: '' });
  });
});

describe('MemoryBreakerStore: restoring a half-open snapshot', () => {
  const halfOpen: BreakerSnapshot = {
    version: 1,
    state: 'half-open',
    openUntilMs: null,
    consecutiveOpens: 3,
    probeSuccesses: 1,
    strategy: 'consecutive',
    window: null,
  };

  it('holds the slots of probes that may still run elsewhere: open until probesUntilMs, quietly, then half-open', async () => {
    const { clock, store, moves, transitions } = setup({}, { ...halfOpen, probesUntilMs: START_MS + 2_500 });
    expect(transitions).toEqual([]);
    expect(store.admit()).toEqual({ kind: 'rejected', state: 'open', remainingMs: 2_500 });
    expect(store.read()).toMatchObject({ state: 'open', openUntilMs: START_MS + 2_500, consecutiveOpens: 3 });
    await clock.advance(2_500);
    expect(store.admit().kind).toBe('probe');
    expect(moves()).toEqual(['open>half-open:open-elapsed']);
    expect(transitions[0]!.atMs).toBe(START_MS + 2_500);
  });

  it('assumes a probe was just admitted when the snapshot does not say (older snapshots)', async () => {
    const { clock, store } = setup({}, halfOpen);
    expect(store.admit()).toEqual({ kind: 'rejected', state: 'open', remainingMs: 5_000 });
    await clock.advance(5_000);
    expect(store.admit().kind).toBe('probe');
  });

  it('frees every slot at once, keeping the probe successes, when no probe can still be running', () => {
    for (const probesUntilMs of [null, START_MS]) {
      const { store } = setup(
        { halfOpenMaxProbes: 2, probeSuccessesToClose: 2 },
        { ...halfOpen, probesUntilMs },
      );
      const first = store.admit() as BreakerTicket;
      expect(first.kind).toBe('probe');
      expect(store.admit().kind).toBe('probe');
      store.report(first, 'success');
      // The snapshot's success and this one make two.
      expect(store.read().state).toBe('closed');
    }
  });

  it('reports the latest deadline of its running probes, for snapshots of its own', async () => {
    const { clock, store, trip } = setup({ halfOpenMaxProbes: 2 });
    trip();
    await clock.advance(1_000);
    store.admit();
    await clock.advance(300);
    store.admit();
    expect(store.read().probesUntilMs).toBe(START_MS + 1_300 + 5_000);
  });
});

describe('parseBreakerSnapshot', () => {
  const valid: BreakerSnapshot = {
    version: 1,
    state: 'closed',
    openUntilMs: null,
    consecutiveOpens: 0,
    probeSuccesses: 0,
    strategy: 'consecutive',
    window: null,
  };

  it('accepts a snapshot', () => {
    expect(parseBreakerSnapshot(valid)).toEqual(valid);
  });

  it.each([
    [null, /initialState.\(itself\) must be an object/],
    [{ ...valid, version: 2 }, /initialState.version must be 1, got 2/],
    [{ ...valid, state: 'ajar' }, /initialState.state must be "closed" or "open"/],
    [
      { ...valid, state: 'open' },
      /initialState.openUntilMs must be a number of epoch milliseconds, got null/,
    ],
    [{ ...valid, openUntilMs: 5 }, /initialState.openUntilMs must be null unless state is "open"/],
    [{ ...valid, consecutiveOpens: -1 }, /initialState.consecutiveOpens must be an integer >= 0/],
    [{ ...valid, probeSuccesses: 'one' }, /initialState.probeSuccesses must be an integer >= 0, got "one"/],
    [{ ...valid, strategy: 3 }, /initialState.strategy must be a string/],
    [{ ...valid, probesUntilMs: 5 }, /initialState.probesUntilMs must be null unless state is "half-open"/],
    [
      { ...valid, state: 'half-open', probesUntilMs: 'soon' },
      /initialState.probesUntilMs must be a number of epoch milliseconds or null, got "soon"/,
    ],
    [{ ...valid, cause: 'boom' }, /initialState.cause must be a serialised error/],
  ])('rejects %j with config.invalid', (value, message) => {
    expect(() => parseBreakerSnapshot(value)).toThrow(message);
    expect(() => parseBreakerSnapshot(value)).toThrow(KeelError);
  });
});
