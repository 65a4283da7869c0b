import { describe, expect, it } from 'vitest';
import type { Message } from '../../spec/model.js';
import { MemoryRunStore } from '../../store/memory-run-store.js';
import { FakeClock } from '../../testing/fake-clock.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { agent } from '../agent.js';
import { agentTool } from './agent-tool.js';
import { defaultHandoffFilter, handoff } from './handoff.js';

describe('handoffs: another agent answers', () => {
  it('transfers the conversation, answers with the target, and the report says who answered; agent tools nest inside', async () => {
    const clock = new FakeClock();
    const store = new MemoryRunStore();
    const research = agent({
      name: 'research',
      model: scriptedModel([{ content: 'order 7 shipped' }]),
      clock,
      store,
    });
    const supportModel = scriptedModel([
      { toolCalls: [{ name: 'research', arguments: { prompt: 'status of order 7' } }] },
      { content: 'Your order 7 has shipped.' },
    ]);
    const support = agent({
      name: 'support',
      instructions: 'You help customers.',
      model: supportModel,
      clock,
      store,
      tools: [agentTool(research, { name: 'research', description: 'Looks orders up' })],
    });
    const triageModel = scriptedModel([
      { toolCalls: [{ name: 'transfer_to_support', arguments: { reason: 'order' } }] },
    ]);
    const triage = agent({
      name: 'triage',
      instructions: 'Route.',
      model: triageModel,
      clock,
      store,
      handoffs: [support],
    });
    const result = await clock.runUntilSettled(triage.run('Where is my order 7?', { runId: 't1' }));
    expect(result.status).toBe('completed');
    expect(result.output).toBe('Your order 7 has shipped.');
    expect(result.stopDetail).toBe('handoff to support');
    expect(result.report.children?.answeredBy).toBe('support');
    expect(result.state.children?.[0]).toMatchObject({
      runId: 't1:1:0/transfer_to_support',
      kind: 'handoff',
      status: 'completed',
    });
    // The target got the conversation: its own instructions, then the user's words (the handoff call left out).
    expect(supportModel.calls[0]?.messages).toEqual([
      { role: 'system', content: 'You help customers.' },
      { role: 'user', content: 'Where is my order 7?' },
    ]);
    // The grandchild is linked to the child, and the tree's requests add up in the root's report.
    const grandchild = await store.loadRun('t1:1:0/transfer_to_support:1:0/research');
    expect((grandchild!.state as { parentRunId?: string }).parentRunId).toBe('t1:1:0/transfer_to_support');
    expect(result.report.requests.total).toBe(4);
  });

  it('takes an input filter, and the default filter drops system messages and the handing-over tool calls', () => {
    const messages: Message[] = [
      { role: 'system', content: 'x' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'transfer_to_b', arguments: '{}' }] },
    ];
    expect(defaultHandoffFilter(messages)).toEqual([{ role: 'user', content: 'hi' }]);
    const target = agent({ name: 'b', model: scriptedModel([]) });
    expect(handoff(target, { name: 'to_b' }).name).toBe('to_b');
    expect(() => handoff({} as never)).toThrow(/target must be an agent/);
  });
});
