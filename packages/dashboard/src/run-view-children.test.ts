// The run page of a run in a tree of agents: the parent it was started by, and the child runs it started.
import { agent, agentTool, MemoryRunStore } from '@keel/core';
import { FakeClock, scriptedModel } from '@keel/core/testing';
import { describe, expect, it } from 'vitest';
import { type RunView, runView } from './run-view.js';

describe('runView of a tree of agents', () => {
  it('links a parent to its child runs, and a child to its parent', async () => {
    const clock = new FakeClock();
    const store = new MemoryRunStore();
    const research = agent({ name: 'research', model: scriptedModel([{ content: 'found' }]), clock, store });
    const triage = agent({
      name: 'triage',
      model: scriptedModel([
        { toolCalls: [{ name: 'research', arguments: { prompt: 'look' } }] },
        { content: 'done' },
      ]),
      clock,
      store,
      tools: [agentTool(research, { name: 'research', description: 'Looks things up' })],
    });
    await clock.runUntilSettled(triage.run('go', { runId: 'tree-1' }));
    const parent = runView((await store.loadRun('tree-1'))!, [], clock.now()) as RunView;
    expect(parent.parentRunId).toBeUndefined();
    expect(parent.children).toEqual([
      {
        runId: 'tree-1:1:0/research',
        agentName: 'research',
        kind: 'tool',
        toolName: 'research',
        status: 'completed',
      },
    ]);
    const child = runView((await store.loadRun('tree-1:1:0/research'))!, [], clock.now()) as RunView;
    expect(child.parentRunId).toBe('tree-1');
    expect(child.children).toEqual([]);
  });
});
