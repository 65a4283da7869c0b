import { afterEach, describe, expect, it, vi } from 'vitest';
import { runStoreContract } from '../testing/run-store-contract.js';
import { MemoryRunStore } from './memory-run-store.js';

runStoreContract('MemoryRunStore', () => new MemoryRunStore());

describe('MemoryRunStore: the cost of a write', () => {
  afterEach(() => vi.restoreAllMocks());

  it('keeps a commit as the texts it was written as: the write parses nothing, a load parses them', async () => {
    const store = new MemoryRunStore();
    await store.createRun({
      runId: 'run',
      agentName: 'agent',
      status: 'running',
      schemaVersion: 1,
      state: { step: 0, messages: 1 },
      messages: { start: 0, messages: [{ role: 'user', content: 'go' }] },
      lease: { owner: 'owner', expiresAtMs: 2_000 },
      createdAtMs: 1_000,
    });
    const parse = vi.spyOn(JSON, 'parse');
    const stateText = '{"step":1,"messages":2,"journal":{"entries":1,"dropped":0}}';
    const version = await store.commitStep('run', {
      checkpoint: {
        expectedVersion: 1,
        owner: 'owner',
        status: 'running',
        schemaVersion: 1,
        nowMs: 1_500,
        get state() {
          return JSON.parse(stateText);
        },
        messages: { start: 1, texts: ['{"role":"assistant","content":"hi"}'], messages: [] },
        journal: { start: 0, dropped: 0, texts: ['{"type":"step","atMs":1500}'], entries: [] },
      },
      stateText,
      leaseTtlMs: 1_000,
    });
    expect(version).toBe(2);
    expect(parse).not.toHaveBeenCalled();
    const loaded = await store.loadRun('run');
    expect(loaded?.state).toEqual({
      step: 1,
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: 'hi' },
      ],
      journal: { entries: [{ type: 'step', atMs: 1_500 }], dropped: 0 },
    });
  });
});
