import { MemoryRunStore } from '@keel/core';
import { FaultyRunStore } from '@keel/core/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ChangeFeed, type StoreChange } from './change-feed.js';

const newRun = (runId: string) => ({
  runId,
  agentName: 'agent',
  status: 'running' as const,
  schemaVersion: 2,
  state: {},
  createdAtMs: 1,
});

describe('ChangeFeed', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reports new and moved runs, a lease taken, a failing store, its return, and stops polling when nobody listens', async () => {
    const store = new FaultyRunStore(new MemoryRunStore());
    const listings = vi.spyOn(store, 'listRuns');
    const feed = new ChangeFeed(store, 1_000, 100);
    const changes: StoreChange[] = [];
    const unsubscribe = feed.subscribe((change) => changes.push(change));
    await vi.advanceTimersByTimeAsync(0);
    expect(changes).toEqual([{ kind: 'ready' }]);

    await store.createRun(newRun('a'));
    await vi.advanceTimersByTimeAsync(999);
    expect(changes).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(changes.at(-1)).toEqual({ kind: 'runs', runIds: ['a'] });

    await vi.advanceTimersByTimeAsync(1_000);
    expect(changes).toHaveLength(2);

    store.down = true;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(changes.at(-1)).toMatchObject({ kind: 'error', code: 'store.unavailable' });
    store.down = false;
    await store.createRun(newRun('b'));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(changes.slice(-2)).toEqual([{ kind: 'ready' }, { kind: 'runs', runIds: ['b'] }]);

    const late: StoreChange[] = [];
    feed.subscribe((change) => late.push(change));
    expect(late).toEqual([{ kind: 'ready' }]);

    // A worker takes a queued run: the lease moves, the version does not.
    const before = changes.length;
    await store.acquireLease('b', 'worker-a', 30_000, Date.now());
    await vi.advanceTimersByTimeAsync(1_000);
    expect(changes.slice(before)).toEqual([{ kind: 'runs', runIds: ['b'] }]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(changes).toHaveLength(before + 1);

    unsubscribe();
    feed.close();
    const polls = listings.mock.calls.length;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(listings.mock.calls.length).toBe(polls);
  });
});
