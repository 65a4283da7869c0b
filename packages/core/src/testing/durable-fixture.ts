import { type Agent, agent } from '../agent/agent.js';
import { stopRun } from '../agent/run/directives.js';
import type { DurabilityOptions } from '../agent/run/durability.js';
import type { RunTransition } from '../agent/run/run-state.js';
import { tool } from '../agent/tools/tool.js';
import type { RunStore } from '../spec/run-store.js';
import { FakeClock } from './fake-clock.js';
import { type ScriptedModel, type ScriptedResponse, scriptedModel } from './scripted-model.js';

/** When the durable-run fixtures start their clocks. */
export const FIXTURE_START_MS = 1_700_000_000_000;

/** One execution of a fixture tool: the side effect a crash must never repeat. */
export interface Execution {
  readonly tool: string;
  readonly key: string;
  readonly attempt: number;
}

/** A promise with its resolve function, to hold a call open until a test lets it go. */
export interface Gate {
  readonly entered: Promise<void>;
  readonly release: () => void;
}

/**
 * A small world for durable-run tests: a model whose answer depends only on how far the conversation has gone (so a
 * resumed run gets the same answers), tools that log every execution, and agents on any store.
 *
 * The script: step 1 calls `lookup` (idempotent) and `charge` (not idempotent), step 2 calls `charge` again, step 3
 * answers `done`. `send_mail` needs approval for addresses outside example.com. `place_order` (idempotent) ends the
 * run with `stopRun('order placed', { orderId })`.
 */
export class DurableFixture {
  readonly executions: Execution[] = [];
  /** Model requests per step (index 0 is step 1), across every agent of the fixture. */
  readonly requestsByStep: number[] = [];
  /** Holds the next execution of this key open (before its effect) until released. */
  private gates = new Map<string, { release: () => void; entered: () => void; promise: Promise<void> }>();
  script: readonly ScriptedResponse[] = [
    {
      toolCalls: [
        { name: 'lookup', arguments: { city: 'Paris' } },
        { name: 'charge', arguments: { amountCents: 500 } },
      ],
    },
    { toolCalls: [{ name: 'charge', arguments: { amountCents: 700 } }] },
    { content: 'done' },
  ];
  readonly model: ScriptedModel = scriptedModel((request) => {
    const step = request.messages.filter((message) => message.role === 'assistant').length;
    this.requestsByStep[step] = (this.requestsByStep[step] ?? 0) + 1;
    return this.script[step] ?? { content: 'done' };
  });

  /** Makes `key`'s next execution wait, before its effect, until `release` is called. */
  gate(key: string): Gate {
    let release!: () => void;
    let entered!: () => void;
    const promise = new Promise<void>((resolve) => {
      release = resolve;
    });
    const enteredPromise = new Promise<void>((resolve) => {
      entered = resolve;
    });
    this.gates.set(key, { release, entered, promise });
    return { entered: enteredPromise, release };
  }

  /** Executions of one idempotency key. */
  executionsOf(key: string): Execution[] {
    return this.executions.filter((execution) => execution.key === key);
  }

  private async effect(name: string, key: string, attempt: number): Promise<boolean> {
    const gate = this.gates.get(key);
    if (gate !== undefined) {
      this.gates.delete(key);
      gate.entered();
      await gate.promise;
      // Released as if the process had died here: the effect never happens.
      return false;
    }
    this.executions.push({ tool: name, key, attempt });
    return true;
  }

  tools() {
    const lookup = tool({
      name: 'lookup',
      description: 'Weather for a city',
      input: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } as const,
      idempotent: true,
      execute: async ({ city }: { city: string }, context) => {
        await this.effect('lookup', context.idempotencyKey, context.attempt);
        return `${city}: sunny`;
      },
    });
    const charge = tool({
      name: 'charge',
      description: 'Charges the card',
      input: {
        type: 'object',
        properties: { amountCents: { type: 'integer' } },
        required: ['amountCents'],
      } as const,
      execute: async ({ amountCents }: { amountCents: number }, context) => {
        await this.effect('charge', context.idempotencyKey, context.attempt);
        return { charged: amountCents };
      },
    });
    const sendMail = tool({
      name: 'send_mail',
      description: 'Sends a mail',
      input: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] } as const,
      needsApproval: ({ to }: { to: string }) => !to.endsWith('@example.com'),
      execute: async ({ to }: { to: string }, context) => {
        await this.effect('send_mail', context.idempotencyKey, context.attempt);
        return `sent to ${to}`;
      },
    });
    const placeOrder = tool({
      name: 'place_order',
      description: 'Places the order and ends the run',
      input: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] } as const,
      idempotent: true,
      execute: async ({ orderId }: { orderId: string }, context) => {
        await this.effect('place_order', context.idempotencyKey, context.attempt);
        return stopRun('order placed', { orderId });
      },
    });
    return [lookup, charge, sendMail, placeOrder];
  }

  /** An agent of this fixture on `store`, with its own clock (a process of its own). */
  agent(
    store: RunStore,
    options: {
      owner: string;
      clock?: FakeClock;
      durability?: Omit<DurabilityOptions, 'owner'>;
      onTransition?: (transition: RunTransition) => void;
    },
  ): Agent {
    const onTransition = options.onTransition;
    return agent({
      name: 'durable-fixture',
      model: this.model,
      tools: this.tools(),
      clock: options.clock ?? new FakeClock(FIXTURE_START_MS),
      limits: { maxParallelToolCalls: 1 },
      retry: { maxAttempts: 1, toolMaxAttempts: 1 },
      store,
      durability: { storeMaxAttempts: 1, ...options.durability, owner: options.owner },
      ...(onTransition === undefined ? {} : { checkpoint: (transition) => onTransition(transition) }),
    });
  }
}
