import { describe, expect, it } from 'vitest';
import { KeelError } from '../../errors/keel-error.js';
import { constant } from '../../policies/delays.js';
import type { Message, ModelRequest } from '../../spec/model.js';
import { MemoryRunStore } from '../../store/memory-run-store.js';
import { withoutCommitStep } from '../../testing/contract-support.js';
import { FakeClock } from '../../testing/fake-clock.js';
import { type ScriptedStep, scriptedModel } from '../../testing/scripted-model.js';
import { agent } from '../agent.js';
import type { AgentOptions } from '../agent-options.js';
import { tool } from '../tools/tool.js';
import { agentTool } from './agent-tool.js';

/** A parent model that hands `research` a task, then answers with what the tool message said. */
function delegatingModel() {
  return scriptedModel((request: ModelRequest) => {
    const last = request.messages.at(-1) as Message;
    if (last.role === 'tool') {
      const seen = JSON.parse(last.content) as { content?: unknown };
      return { content: `parent saw: ${typeof seen.content === 'string' ? seen.content : last.content}` };
    }
    return { toolCalls: [{ name: 'research', arguments: { prompt: 'find the capital of France' } }] };
  });
}

function lastToolMessage(messages: readonly Message[]): Extract<Message, { role: 'tool' }> {
  return messages.filter((message) => message.role === 'tool').at(-1) as Extract<Message, { role: 'tool' }>;
}

function tree(
  childScript: readonly ScriptedStep[],
  options: {
    childTools?: AgentOptions['tools'];
    parent?: Partial<AgentOptions>;
    child?: Partial<AgentOptions>;
  } = {},
) {
  const clock = new FakeClock();
  const store = new MemoryRunStore();
  const childModel = scriptedModel(childScript);
  const research = agent({
    name: 'research',
    model: childModel,
    clock,
    store,
    tools: options.childTools ?? [],
    retry: { delay: constant(10) },
    ...options.child,
  });
  const parentModel = delegatingModel();
  const triage = agent({
    name: 'triage',
    model: parentModel,
    clock,
    store,
    tools: [agentTool(research, { name: 'research', description: 'Looks facts up' })],
    retry: { delay: constant(10) },
    ...options.parent,
  });
  return { clock, store, research, triage, childModel, parentModel };
}

describe('agentTool: an agent as a tool, in a child run', () => {
  it("returns the child's output, links the child run to its parent and adds its figures to the parent's report", async () => {
    const { clock, store, triage, childModel } = tree([{ content: 'Paris', usage: { inputTokens: 7 } }]);
    const result = await clock.runUntilSettled(triage.run('capital?', { runId: 'p1' }));
    expect(result.status).toBe('completed');
    expect(result.output).toBe('parent saw: Paris');
    expect(childModel.calls[0]?.messages.at(-1)).toMatchObject({
      role: 'user',
      content: 'find the capital of France',
    });
    const childRunId = 'p1:1:0/research';
    const child = await store.loadRun(childRunId);
    expect(child?.status).toBe('completed');
    expect((child!.state as { parentRunId?: string }).parentRunId).toBe('p1');
    expect(result.state.children).toEqual([
      {
        runId: childRunId,
        agentName: 'research',
        toolName: 'research',
        kind: 'tool',
        idempotencyKey: 'p1:1:0',
        status: 'completed',
        stopReason: 'final_answer',
      },
    ]);
    // Two parent requests and the child's one; the child's tokens count in the tree's usage.
    expect(result.report.requests.total).toBe(3);
    expect(result.report.usage.inputTokens).toBe(7);
    expect(result.report.children).toMatchObject({ total: 1, byStatus: { completed: 1 } });
  });

  it("gives the parent's model a typed tool error when the child fails, and the parent goes on", async () => {
    const { clock, triage } = tree([
      new KeelError('provider.auth', 'bad key', { guidance: 'Check the API key.' }),
    ]);
    const result = await clock.runUntilSettled(triage.run('capital?', { runId: 'p2' }));
    expect(result.status).toBe('completed');
    const message = lastToolMessage(result.messages);
    expect(message.isError).toBe(true);
    const content = JSON.parse(message.content) as {
      error: { code: string; data: Record<string, unknown> };
      guidance: string;
    };
    expect(content.error.code).toBe('provider.auth');
    expect(content.error.data).toMatchObject({ childRunId: 'p2:1:0/research', status: 'failed' });
    expect(content.guidance).toContain('Check the API key.');
    expect(result.state.children?.[0]).toMatchObject({ status: 'failed', errorCode: 'provider.auth' });
  });

  it('stores a child run with its first write, one commit: a child whose first write fails is not stored', async () => {
    const { clock, store, triage } = tree([{ content: 'Paris' }, { content: 'Lyon' }]);
    const created: string[] = [];
    const createRun = store.createRun.bind(store);
    store.createRun = (run) => {
      created.push(run.runId);
      return createRun(run);
    };
    const commitStep = store.commitStep.bind(store);
    let failCreates = false;
    store.commitStep = (runId, commit) => {
      if (commit.create !== undefined) {
        created.push(runId);
        if (failCreates) return Promise.reject(new KeelError('store.unavailable', 'down (simulated)'));
      }
      return commitStep(runId, commit);
    };
    const result = await clock.runUntilSettled(triage.run('capital?', { runId: 'p8' }));
    expect(result.output).toBe('parent saw: Paris');
    // The parent by createRun; the child by the commit of its end, which created it: one write in all.
    expect(created).toEqual(['p8', 'p8:1:0/research']);
    expect(await store.loadRun('p8:1:0/research')).toMatchObject({ status: 'completed', version: 1 });
    failCreates = true;
    const failed = await clock.runUntilSettled(triage.run('capital?', { runId: 'p9' }));
    // The child never reached the store: the parent's model saw a store error, and no child run is stored.
    expect(failed.status).toBe('completed');
    expect(JSON.parse(lastToolMessage(failed.state.messages).content)).toMatchObject({
      error: { code: 'store.unavailable' },
    });
    expect(await store.loadRun('p9:1:0/research')).toBeUndefined();
  });

  it("saves the parent's call before its child starts, though the agent tool is idempotent", async () => {
    const { clock, store, triage } = tree([{ content: 'Paris' }]);
    const seen: string[][] = [];
    const commitStep = store.commitStep.bind(store);
    store.commitStep = async (runId, commit) => {
      // What the parent's ledger holds when its child's first write comes.
      if (commit.create !== undefined) seen.push((await store.ledger('p11')).map((entry) => entry.status));
      return commitStep(runId, commit);
    };
    const result = await clock.runUntilSettled(triage.run('capital?', { runId: 'p11' }));
    expect(result.output).toBe('parent saw: Paris');
    expect(seen).toEqual([['started']]);
    expect((await store.ledger('p11')).map((entry) => entry.status)).toEqual(['completed']);
  });

  it('creates a child run first on a store whose commitStep is hidden (the separate calls)', async () => {
    const { clock, store } = tree([{ content: 'Paris' }]);
    const separate = withoutCommitStep(store);
    const research = agent({
      name: 'research',
      model: scriptedModel([{ content: 'Paris' }]),
      clock,
      store: separate,
    });
    const parent = agent({
      name: 'triage',
      model: delegatingModel(),
      clock,
      store: separate,
      tools: [agentTool(research, { name: 'research', description: 'Looks facts up' })],
    });
    const result = await clock.runUntilSettled(parent.run('capital?', { runId: 'p10' }));
    expect(result.output).toBe('parent saw: Paris');
    expect(await store.loadRun('p10:1:0/research')).toMatchObject({ status: 'completed' });
  });

  it('replays a completed child from the ledger when the parent resumes, never running it again', async () => {
    const { clock, store, triage, childModel } = tree([{ content: 'Paris' }]);
    await clock.runUntilSettled(triage.run('capital?', { runId: 'p3' }));
    // The child run is stored ended: a call with the same key resolves with its stored result, calling nothing.
    const again = await clock.runUntilSettled(triage.resume('p3'));
    expect(again.output).toBe('parent saw: Paris');
    expect(childModel.calls).toHaveLength(1);
    expect((await store.ledger('p3')).map((entry) => entry.status)).toEqual(['completed']);
  });

  it('cancels the child when the parent is cancelled', async () => {
    let started!: () => void;
    const childStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    const slow = tool({
      name: 'slow',
      description: 'waits until cancelled',
      input: { type: 'object' },
      idempotent: true,
      timeoutMs: 1_000_000,
      execute: (_input, { signal }) =>
        new Promise((_resolve, reject) => {
          started();
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        }),
    });
    const { clock, store, triage } = tree([{ toolCalls: [{ name: 'slow' }] }, { content: 'never' }], {
      childTools: [slow],
    });
    const controller = new AbortController();
    const running = triage.run('capital?', { runId: 'p4', signal: controller.signal });
    await childStarted;
    controller.abort('user stop');
    const result = await clock.runUntilSettled(running);
    expect(result.status).toBe('cancelled');
    expect((await store.loadRun('p4:1:0/research'))?.status).toBe('cancelled');
  });

  it("surfaces the child's approval on the parent; the parent's resume approves it and the child goes on from its checkpoint", async () => {
    const executed: string[] = [];
    const refund = tool({
      name: 'refund',
      description: 'refunds an order',
      input: { type: 'object' },
      needsApproval: true,
      execute: (_input, { idempotencyKey }) => {
        executed.push(idempotencyKey);
        return 'refunded';
      },
    });
    const { clock, triage, childModel } = tree(
      [{ toolCalls: [{ name: 'refund' }] }, { content: 'refund done' }],
      {
        childTools: [refund],
      },
    );
    const first = await clock.runUntilSettled(triage.run('refund order 7', { runId: 'p5' }));
    expect(first.status).toBe('interrupted');
    expect(first.stopReason).toBe('approval_required');
    const childKey = 'p5:1:0/research:1:0';
    expect(first.pending).toEqual([
      expect.objectContaining({
        kind: 'approval',
        idempotencyKey: childKey,
        toolName: 'refund',
        childRunId: 'p5:1:0/research',
      }),
    ]);
    expect(executed).toEqual([]);
    const second = await clock.runUntilSettled(
      triage.resume('p5', { approvals: { [childKey]: { approved: true } } }),
    );
    expect(second.status).toBe('completed');
    expect(second.output).toBe('parent saw: refund done');
    expect(executed).toEqual([childKey]);
    // The child's first model response was checkpointed: it was not asked again.
    expect(childModel.calls).toHaveLength(2);
  });

  it('shares one retry budget across the tree: N retries at most, the children included', async () => {
    const maxRetries = 3;
    const overloaded = () => new KeelError('provider.overloaded', 'busy');
    const { clock, triage, childModel } = tree(Array.from({ length: 20 }, overloaded), {
      parent: { retry: { delay: constant(10), maxAttempts: 10, runBudget: { maxRetries, ratio: false } } },
      child: { retry: { delay: constant(10), maxAttempts: 10 } },
    });
    const result = await clock.runUntilSettled(triage.run('capital?', { runId: 'p6' }));
    expect(result.status).toBe('completed');
    // The child's own budget (10) would have allowed more: its parent's (3) decided.
    expect(childModel.calls).toHaveLength(1 + maxRetries);
    expect(result.report.retries.total).toBe(maxRetries);
    expect(lastToolMessage(result.messages).isError).toBe(true);
  });

  it('returns a structured result when the child has an outputSchema', async () => {
    const { clock, triage } = tree([{ content: '{"capital":"Paris"}' }], {
      child: {
        outputSchema: {
          type: 'object',
          properties: { capital: { type: 'string' } },
          required: ['capital'],
        },
      },
    });
    const result = await clock.runUntilSettled(triage.run('capital?', { runId: 'p8' }));
    expect(JSON.parse(lastToolMessage(result.messages).content)).toEqual({
      status: 'success',
      content: { capital: 'Paris' },
    });
  });

  it("bounds the child's deadline by its parent's", async () => {
    const { clock, store, triage } = tree([{ content: 'Paris' }], {
      parent: { limits: { timeoutMs: 5_000 } },
      child: { limits: { timeoutMs: 60_000 } },
    });
    const result = await clock.runUntilSettled(triage.run('capital?', { runId: 'p7' }));
    const child = (await store.loadRun('p7:1:0/research'))?.state as { deadlineAtMs: number };
    expect(child.deadlineAtMs).toBe(result.state.deadlineAtMs);
  });

  it("runs the child as its parent's tenant and priority unless it has its own", async () => {
    const { clock, store, triage } = tree([{ content: 'Paris' }]);
    await clock.runUntilSettled(triage.run('capital?', { runId: 'p8', tenant: 'acme', priority: 3 }));
    const child = (await store.loadRun('p8:1:0/research'))?.state as { tenant?: string; priority?: number };
    expect(child).toMatchObject({ tenant: 'acme', priority: 3 });
  });
});
