import { describe, expect, it } from 'vitest';
import { constant } from '../../policies/delays.js';
import type { Message } from '../../spec/model.js';
import type { ReconcileResult } from '../../spec/tool.js';
import { MemoryRunStore } from '../../store/memory-run-store.js';
import { FakeClock } from '../../testing/fake-clock.js';
import { type ScriptedStep, scriptedModel } from '../../testing/scripted-model.js';
import { type Agent, agent } from '../agent.js';
import type { AgentOptions } from '../agent-options.js';
import { tool } from './tool.js';

const ticketInput = {
  type: 'object',
  properties: { title: { type: 'string' } },
  required: ['title'],
  additionalProperties: false,
} as const;

/**
 * A ticket service behind a tool that is not idempotent: each execution opens a ticket (its effect), then, while
 * `timeOutAfterEffect` holds, never answers, so the tool's 1 s timeout cuts it after the effect happened.
 */
class TicketService {
  readonly executions: string[] = [];
  readonly tickets = new Map<string, { ticket: string; title: string }>();
  timeOutAfterEffect = true;
  effectBeforeTimeout = true;
  reconciles: string[] = [];

  tool(options: { reconcile?: boolean; idempotent?: boolean; reconcileFails?: boolean } = {}) {
    return tool({
      name: 'create_ticket',
      description: 'Opens a ticket',
      input: ticketInput,
      idempotent: options.idempotent ?? false,
      timeoutMs: 1_000,
      execute: async (input: { title: string }, { idempotencyKey }) => {
        this.executions.push(idempotencyKey);
        const opened = { ticket: `T-${this.tickets.size + 1}`, title: input.title };
        if (this.effectBeforeTimeout || !this.timeOutAfterEffect) this.tickets.set(idempotencyKey, opened);
        if (this.timeOutAfterEffect) {
          this.timeOutAfterEffect = false;
          return new Promise<never>(() => {});
        }
        return opened;
      },
      ...(options.reconcile === true
        ? {
            reconcile: async (_input: { title: string }, { idempotencyKey }): Promise<ReconcileResult> => {
              this.reconciles.push(idempotencyKey);
              if (options.reconcileFails === true) throw new Error('lookup service down');
              const found = this.tickets.get(idempotencyKey);
              return found === undefined ? { happened: false } : { happened: true, output: found };
            },
          }
        : {}),
    });
  }
}

const call = (title: string) => ({ toolCalls: [{ name: 'create_ticket', arguments: { title } }] });
/** The model calls the tool, then calls it again with the same arguments (as models do after a timeout), then answers. */
const REPEATING: readonly ScriptedStep[] = [
  call('Printer on fire'),
  call('Printer on fire'),
  { content: 'done' },
];

async function settle<T>(clock: FakeClock, promise: Promise<T>): Promise<T> {
  let done = false;
  const watched = promise.finally(() => {
    done = true;
  });
  while (!done) await clock.advance(50);
  return watched;
}

function build(
  clock: FakeClock,
  script: readonly ScriptedStep[],
  options: Partial<AgentOptions> = {},
): { model: ReturnType<typeof scriptedModel>; assistant: Agent } {
  const model = scriptedModel(script);
  return { model, assistant: agent({ model, clock, retry: { delay: constant(100) }, ...options }) };
}

function toolResults(messages: readonly Message[]): Record<string, unknown>[] {
  return messages.filter((message) => message.role === 'tool').map((message) => JSON.parse(message.content));
}

describe('at most once within a live run: a call whose outcome is unknown', () => {
  it('tells the model the outcome is unknown, not retryable, and counts the call in the report', async () => {
    const clock = new FakeClock();
    const service = new TicketService();
    const { model, assistant } = build(clock, [call('Printer on fire'), { content: 'done' }], {
      tools: [service.tool()],
    });
    const result = await settle(clock, assistant.run('Open a ticket'));

    expect(result.status).toBe('completed');
    expect(service.executions).toHaveLength(1);
    const [seen] = toolResults(model.calls[1]!.messages);
    expect(seen).toMatchObject({
      status: 'error',
      error: {
        code: 'tool.outcome_unknown',
        retryable: false,
        data: { toolName: 'create_ticket', outcome: 'unknown', errorCode: 'tool.timeout' },
      },
    });
    expect(String(seen!.guidance)).toMatch(/Do not call it again with the same arguments/);
    expect(result.report.uncertainCalls).toEqual({
      total: 1,
      byTool: { create_ticket: 1 },
      reconciled: 0,
      blocked: 0,
    });
    expect(result.report.toolCalls.errorsByCode).toEqual({ 'tool.outcome_unknown': 1 });
    expect(result.report.errors.byCode['tool.timeout']).toBe(1);
    expect(result.state.uncertainCalls).toMatchObject([
      { toolName: 'create_ticket', argumentsKey: '{"title":"Printer on fire"}', errorCode: 'tool.timeout' },
    ]);
  });

  it('answers a repeat with what reconcile found when the effect happened, executing nothing', async () => {
    const clock = new FakeClock();
    const service = new TicketService();
    const { model, assistant } = build(clock, REPEATING, { tools: [service.tool({ reconcile: true })] });
    const result = await settle(clock, assistant.run('Open a ticket'));

    expect(result.status).toBe('completed');
    expect(service.executions).toHaveLength(1);
    expect(service.tickets.size).toBe(1);
    expect(service.reconciles).toEqual([service.executions[0]]);
    expect(toolResults(model.calls[2]!.messages).at(-1)).toEqual({
      status: 'success',
      content: { ticket: 'T-1', title: 'Printer on fire' },
    });
    expect(result.report.uncertainCalls).toMatchObject({ total: 1, reconciled: 1, blocked: 0 });
    expect(result.state.uncertainCalls).toBeUndefined();
  });

  it('runs the repeat once when reconcile finds the effect did not happen', async () => {
    const clock = new FakeClock();
    const service = new TicketService();
    service.effectBeforeTimeout = false;
    const { model, assistant } = build(clock, REPEATING, { tools: [service.tool({ reconcile: true })] });
    const result = await settle(clock, assistant.run('Open a ticket'));

    expect(result.status).toBe('completed');
    expect(service.executions).toHaveLength(2);
    expect(service.tickets.size).toBe(1);
    expect(toolResults(model.calls[2]!.messages).at(-1)).toMatchObject({ status: 'success' });
    expect(result.report.uncertainCalls).toMatchObject({ total: 1, reconciled: 1, blocked: 0 });
  });

  it('interrupts for a decision on a repeat when the tool cannot reconcile, and resume executes or abandons it', async () => {
    for (const decision of ['execute', 'abandon'] as const) {
      const clock = new FakeClock();
      const service = new TicketService();
      const store = new MemoryRunStore();
      const { model, assistant } = build(clock, REPEATING, { tools: [service.tool()], store });
      const interrupted = await settle(clock, assistant.run('Open a ticket'));

      expect(interrupted.status).toBe('interrupted');
      expect(interrupted.stopReason).toBe('decision_required');
      expect(service.executions).toHaveLength(1);
      const firstKey = service.executions[0]!;
      const [pending] = interrupted.pending ?? [];
      expect(pending).toMatchObject({
        kind: 'uncertain',
        toolName: 'create_ticket',
        arguments: { title: 'Printer on fire' },
        repeatOf: firstKey,
        step: 2,
      });
      expect(interrupted.error?.message).toMatch(/would repeat an earlier call whose outcome is unknown/);
      expect(interrupted.report.uncertainCalls).toMatchObject({ total: 1, blocked: 1 });

      const resumed = await settle(
        clock,
        assistant.resume(interrupted.runId, { decisions: { [pending!.idempotencyKey]: decision } }),
      );
      expect(resumed.status).toBe('completed');
      const last = toolResults(model.calls[2]!.messages).at(-1);
      if (decision === 'execute') {
        expect(service.executions).toEqual([firstKey, pending!.idempotencyKey]);
        expect(last).toMatchObject({ status: 'success' });
        expect(resumed.state.uncertainCalls).toBeUndefined();
      } else {
        expect(service.executions).toEqual([firstKey]);
        expect(last).toMatchObject({
          status: 'error',
          error: { code: 'tool.outcome_unknown', data: { repeatOf: firstKey, abandoned: true } },
        });
      }
      await store.close();
    }
  });

  it('interrupts too when reconcile itself fails', async () => {
    const clock = new FakeClock();
    const service = new TicketService();
    const { assistant } = build(clock, REPEATING, {
      tools: [service.tool({ reconcile: true, reconcileFails: true })],
    });
    const result = await settle(clock, assistant.run('Open a ticket'));

    expect(result.status).toBe('interrupted');
    expect(service.executions).toHaveLength(1);
    expect(service.reconciles).toHaveLength(1);
  });

  it("refuses the repeat and goes on under uncertainCalls: 'refuse'", async () => {
    const clock = new FakeClock();
    const service = new TicketService();
    const { model, assistant } = build(clock, REPEATING, {
      tools: [service.tool()],
      uncertainCalls: 'refuse',
    });
    const result = await settle(clock, assistant.run('Open a ticket'));

    expect(result.status).toBe('completed');
    expect(service.executions).toHaveLength(1);
    expect(toolResults(model.calls[2]!.messages).at(-1)).toMatchObject({
      status: 'error',
      error: { code: 'tool.outcome_unknown', retryable: false, data: { refused: true } },
    });
    expect(result.report.uncertainCalls).toMatchObject({ total: 1, blocked: 1 });
  });

  it('runs a call with other arguments normally', async () => {
    const clock = new FakeClock();
    const service = new TicketService();
    const { assistant } = build(
      clock,
      [call('Printer on fire'), call('Coffee machine'), { content: 'done' }],
      {
        tools: [service.tool()],
      },
    );
    const result = await settle(clock, assistant.run('Open two tickets'));

    expect(result.status).toBe('completed');
    expect(service.executions).toHaveLength(2);
    expect(result.report.uncertainCalls).toMatchObject({ total: 1, blocked: 0 });
  });

  it('leaves idempotent tools as they were: a timeout is retryable and retried', async () => {
    const clock = new FakeClock();
    const service = new TicketService();
    const { model, assistant } = build(clock, REPEATING, { tools: [service.tool({ idempotent: true })] });
    const result = await settle(clock, assistant.run('Open a ticket'));

    expect(result.status).toBe('completed');
    // The timed-out execution is retried at once by the retry policy, and the model's repeat runs too.
    expect(service.executions).toHaveLength(3);
    expect(toolResults(model.calls[1]!.messages)[0]).toMatchObject({ status: 'success' });
    expect(result.report.uncertainCalls).toBeUndefined();
  });

  it('rejects a reconcile that is not a function', () => {
    expect(() =>
      tool({
        name: 'x',
        description: 'x',
        input: ticketInput,
        execute: () => 1,
        reconcile: 'yes' as never,
      }),
    ).toThrow(/reconcile must be a function/);
    expect(() => agent({ model: scriptedModel([]), uncertainCalls: 'retry' as never })).toThrow(
      /uncertainCalls must be 'interrupt' or 'refuse'/,
    );
  });
});
