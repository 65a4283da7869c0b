import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Message, tool } from '@keel/core';
import type { BrainRequest } from '@keel/simulated';
import { afterAll, describe, expect, it } from 'vitest';
import { EffectLedger } from './effect-ledger.js';
import { recallingBrain } from './recalling-brain.js';
import { MAX_RECALLS } from './scenario.js';
import { instrumentTools } from './tool-faults.js';

const directory = mkdtempSync(join(tmpdir(), 'keel-chaos-recall-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const TICKET = {
  name: 'create_ticket',
  description: 'Opens a ticket',
  inputSchema: { type: 'object', properties: { title: { type: 'string' } } },
} as const;

function request(messages: Message[]): BrainRequest {
  return { model: 'sim-primary', index: 0, messages, tools: [TICKET], toolChoice: 'auto', body: {} };
}

const USER: Message = { role: 'user', content: 'Open a ticket titled Paris trip' };
const call = (id: string): Message => ({
  role: 'assistant',
  content: '',
  toolCalls: [{ id, name: 'create_ticket', arguments: '{"title":"Paris trip"}' }],
});
const failed = (id: string, content: string): Message => ({
  role: 'tool',
  toolCallId: id,
  toolName: 'create_ticket',
  content,
  isError: true,
});

describe('the model of tool-timeout-recall', () => {
  it('calls a failed call again with the same arguments, whatever the error says, at most MAX_RECALLS times', async () => {
    const unknown = '{"status":"error","error":{"code":"tool.outcome_unknown","retryable":false}}';
    const first = await recallingBrain(request([USER, call('a'), failed('a', unknown)]));
    expect(first.toolCalls).toEqual([{ name: 'create_ticket', arguments: { title: 'Paris trip' } }]);

    const conversation: Message[] = [USER];
    for (let index = 0; index <= MAX_RECALLS; index++) {
      conversation.push(call(`c${index}`), failed(`c${index}`, unknown));
    }
    const last = await recallingBrain(request(conversation));
    expect(last.toolCalls ?? []).toEqual([]);
    expect(last.content).toMatch(/could not complete/);
  });

  it('reads a bare error message (as some frameworks send it) as a failure, and a success as none', async () => {
    const bare: Message = {
      role: 'tool',
      toolCallId: 'a',
      toolName: 'create_ticket',
      content: 'create_ticket: the answer did not arrive in time',
    };
    expect((await recallingBrain(request([USER, call('a'), bare]))).toolCalls).toHaveLength(1);
    const success: Message = { ...bare, content: '{"status":"success","content":{"ticket":"T-1"}}' };
    expect((await recallingBrain(request([USER, call('a'), success]))).toolCalls ?? []).toEqual([]);
  });
});

describe('a side effect that times out after it happened', () => {
  it('runs to its end, is recorded in the effect ledger, then throws a TimeoutError; reconcile is kept', async () => {
    const ledger = new EffectLedger(join(directory, 'effects.jsonl'));
    const executed: string[] = [];
    const ticket = tool({
      name: 'create_ticket',
      description: 'Opens a ticket',
      input: { type: 'object', properties: { title: { type: 'string' } } },
      execute: (input: { title?: string }) => {
        executed.push(input.title ?? '');
        return { ticket: 'T-1' };
      },
      reconcile: () => ({ happened: true, output: { ticket: 'T-1' } }),
    });
    const [instrumented] = instrumentTools([ticket], {
      faults: { timeoutAfterEffectRate: 1 },
      seed: 1,
      ledger,
    });
    const context = {
      signal: new AbortController().signal,
      idempotencyKey: 'run-1:1:0',
      runId: 'run-1',
      step: 1,
      callIndex: 0,
      attempt: 1,
    };
    await expect(instrumented!.execute({ title: 'Paris trip' }, context)).rejects.toMatchObject({
      name: 'TimeoutError',
    });
    expect(executed).toEqual(['Paris trip']);
    expect(ledger.read().map((effect) => effect.phase)).toEqual(['started', 'completed']);
    expect(await instrumented!.reconcile!({ title: 'Paris trip' }, context)).toEqual({
      happened: true,
      output: { ticket: 'T-1' },
    });
  });
});
