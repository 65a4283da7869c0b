// At most once across a crash, on a real SQLite file: a call whose outcome became unknown in a live run (it timed out
// after its effect) is still known as such by the process that resumes the run after the first one died, and a call
// the first process died inside is settled by the tool's reconcile on resume.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agent, type ReconcileResult, type Tool, type ToolContext, tool } from '@keel/core';
import {
  FakeClock,
  FaultyRunStore,
  type ScriptedResponse,
  type ScriptedStep,
  scriptedModel,
} from '@keel/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteRunStore } from './sqlite-run-store.js';

const directory = mkdtempSync(join(tmpdir(), 'keel-sqlite-uncertain-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const START_MS = 1_700_000_000_000;

/** Tickets opened, by idempotency key: what a ticket service behind the tool would hold. */
class Tickets {
  readonly executions: string[] = [];
  readonly opened = new Map<string, { ticket: string }>();
  /** What the next execution does after its effect: time out (hang until the tool's 1 s timeout), or hang for good. */
  next: 'time-out' | 'answer' = 'time-out';

  tool(reconcile: boolean) {
    return tool({
      name: 'create_ticket',
      description: 'Opens a ticket',
      input: {
        type: 'object',
        properties: { title: { type: 'string' } },
        required: ['title'],
        additionalProperties: false,
      },
      timeoutMs: 1_000,
      execute: async (_input, { idempotencyKey }) => {
        this.executions.push(idempotencyKey);
        const ticket = { ticket: `T-${this.opened.size + 1}` };
        this.opened.set(idempotencyKey, ticket);
        if (this.next === 'time-out') return new Promise<never>(() => {});
        return ticket;
      },
      ...(reconcile
        ? {
            reconcile: (_input: unknown, { idempotencyKey }: { idempotencyKey: string }): ReconcileResult => {
              const found = this.opened.get(idempotencyKey);
              return found === undefined ? { happened: false } : { happened: true, output: found };
            },
          }
        : {}),
    });
  }
}

const CALL: ScriptedStep = {
  toolCalls: [{ name: 'create_ticket', arguments: { title: 'Printer on fire' } }],
};

interface Process {
  readonly faulty: FaultyRunStore;
  readonly model: ReturnType<typeof scriptedModel>;
  readonly assistant: ReturnType<typeof agent>;
}

function processOf(
  store: SqliteRunStore,
  owner: string,
  clock: FakeClock,
  script: (process: () => Process) => ScriptedStep[],
  tool: Tool,
): Process {
  const faulty = new FaultyRunStore(store);
  let self: Process | undefined;
  const model = scriptedModel(script(() => self!));
  const assistant = agent({
    name: 'support',
    model,
    clock,
    tools: [tool],
    store: faulty,
    durability: { owner },
  });
  self = { faulty, model, assistant };
  return self;
}

async function settle<T>(clock: FakeClock, promise: Promise<T>): Promise<T> {
  let done = false;
  const watched = promise.finally(() => {
    done = true;
  });
  while (!done) await clock.advance(50);
  return watched;
}

describe('SQLite: a call whose outcome is unknown survives a crash', () => {
  it.each([
    [false, 'interrupts for a decision'],
    [true, 'answers from reconcile'],
  ])(
    'after a crash, a repeat of a call that timed out after its effect (reconcile %s) %s',
    async (reconcile) => {
      const store = new SqliteRunStore(join(directory, `repeat-${reconcile}.db`));
      const tickets = new Tickets();
      const runId = `repeat-${String(reconcile)}`;
      const firstClock = new FakeClock(START_MS);
      // Step 2: the model asks for the ticket again, and the process dies before the answer reaches the store.
      const dying = processOf(
        store,
        'first',
        firstClock,
        (self) => [
          CALL,
          () => {
            self().faulty.down = true;
            return CALL as ScriptedResponse;
          },
        ],
        tickets.tool(reconcile),
      );
      // Whatever it says of its end, its store never heard more than the first call's unknown outcome.
      const died = await settle(firstClock, dying.assistant.run('Open a ticket', { runId }));
      expect(died.status).not.toBe('completed');
      expect((await store.loadRun(runId))?.state).toMatchObject({
        uncertainCalls: [{ toolName: 'create_ticket', errorCode: 'tool.timeout' }],
      });
      expect(tickets.executions).toHaveLength(1);

      // Another process, a minute later (the dead one's lease has expired): the model asks for the same ticket again.
      tickets.next = 'answer';
      const secondClock = new FakeClock(START_MS + 60_000);
      const second = processOf(
        store,
        'second',
        secondClock,
        () => [CALL, { content: 'done' }],
        tickets.tool(reconcile),
      );
      const resumed = await settle(secondClock, second.assistant.resume(runId));

      expect(tickets.executions).toHaveLength(1);
      if (reconcile) {
        expect(resumed.status).toBe('completed');
        expect(resumed.report.uncertainCalls).toMatchObject({ total: 1, reconciled: 1 });
      } else {
        expect(resumed.status).toBe('interrupted');
        expect(resumed.pending).toMatchObject([
          { kind: 'uncertain', toolName: 'create_ticket', repeatOf: tickets.executions[0] },
        ]);
        expect((await store.loadRun(runId))?.status).toBe('interrupted');
      }
      await store.close();
    },
  );

  it('on resume, reconcile settles a call the dead process was inside: no decision, no second execution', async () => {
    const store = new SqliteRunStore(join(directory, 'inside.db'));
    const tickets = new Tickets();
    tickets.next = 'answer';
    const firstClock = new FakeClock(START_MS);
    let dying: Process | undefined;
    const inner = tickets.tool(true);
    // The process dies inside the call: its effect happens, its completion never reaches the store.
    const diesInside = {
      ...inner,
      execute: async (input: unknown, context: ToolContext) => {
        const output = await inner.execute(input, context);
        dying!.faulty.down = true;
        return output;
      },
    } as Tool;
    dying = processOf(store, 'first', firstClock, () => [CALL], diesInside);
    expect(
      (await settle(firstClock, dying.assistant.run('Open a ticket', { runId: 'inside' }))).stopReason,
    ).toBe('store_unavailable');
    expect(tickets.executions).toHaveLength(1);

    const secondClock = new FakeClock(START_MS + 60_000);
    const second = processOf(store, 'second', secondClock, () => [{ content: 'done' }], inner);
    const resumed = await settle(secondClock, second.assistant.resume('inside'));

    expect(resumed.status).toBe('completed');
    expect(tickets.executions).toHaveLength(1);
    const last = second.model.calls[0]!.messages.at(-1)!;
    expect(last).toMatchObject({ role: 'tool' });
    expect(JSON.parse(last.content as string)).toEqual({ status: 'success', content: { ticket: 'T-1' } });
    expect(resumed.report.uncertainCalls).toMatchObject({ reconciled: 1 });
    expect(await store.ledger('inside')).toMatchObject([{ status: 'completed' }]);
    await store.close();
  });
});
