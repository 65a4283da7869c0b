import { describe, expect, it } from 'vitest';
import { scriptedModel } from '../../testing/scripted-model.js';
import { agent } from '../agent.js';
import { tool } from './tool.js';

describe('approval checks', () => {
  it('shows the model a tool.failed error when a needsApproval function throws, and does not run the call', async () => {
    let executions = 0;
    const refund = tool({
      name: 'refund',
      description: 'refunds an order',
      input: { type: 'object', properties: { orderId: { type: 'string' } } } as const,
      needsApproval: () => {
        throw new Error('policy service is down');
      },
      execute: () => {
        executions++;
        return 'refunded';
      },
    });
    const model = scriptedModel([
      { toolCalls: [{ name: 'refund', arguments: { orderId: 'A-1' } }] },
      { content: 'could not refund' },
    ]);
    const result = await agent({ model, tools: [refund] }).run('refund A-1');
    expect(result).toMatchObject({ status: 'completed', output: 'could not refund' });
    expect(executions).toBe(0);
    const told = model.calls[1]!.messages.find((message) => message.role === 'tool');
    expect(told?.isError).toBe(true);
    expect(JSON.parse(told!.content)).toMatchObject({
      status: 'error',
      error: { code: 'tool.failed', message: expect.stringContaining('policy service is down') },
    });
    expect(result.report.errors.byCode).toEqual({ 'tool.failed': 1 });
  });

  it('passes a control signal thrown by a needsApproval function through', async () => {
    const controller = new AbortController();
    const check = tool({
      name: 'check',
      description: 'checks',
      input: { type: 'object' },
      needsApproval: () => {
        controller.abort('stop now');
        throw controller.signal.reason;
      },
      execute: () => 'ran',
    });
    const model = scriptedModel([{ toolCalls: [{ name: 'check' }] }, { content: 'x' }]);
    const result = await agent({ model, tools: [check] }).run('go', { signal: controller.signal });
    expect(result).toMatchObject({ status: 'cancelled', stopReason: 'cancelled' });
    expect(model.calls).toHaveLength(1);
  });
});
