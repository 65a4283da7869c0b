import { type Agent, agent } from '../agent/agent.js';
import type { AgentOptions } from '../agent/agent-options.js';
import type { DurabilityOptions } from '../agent/run/durability.js';
import { tool } from '../agent/tools/tool.js';
import { KeelError } from '../errors/keel-error.js';
import type { Message } from '../spec/model.js';
import type { RunStore } from '../spec/run-store.js';
import type { Gate } from './durable-fixture.js';
import { FakeClock } from './fake-clock.js';
import { type ScriptedModel, scriptedModel } from './scripted-model.js';

/** When the session fixtures start their clocks. */
export const SESSION_START_MS = 1_700_000_000_000;

/**
 * A small world for session tests: a model whose answer depends only on the conversation it is sent, so that what it
 * says shows what it saw.
 *
 * The model, after a user message: `weather <city>` calls `lookup` (idempotent) for the city; `mail <address>` calls
 * `send_mail` (which needs approval outside example.com); `recall` answers `you said: ` and every earlier user message
 * it was sent, joined by ` | `; `fail` is refused (`provider.bad_request`); anything else is answered `noted: <text>`.
 * After tool results it answers `done: ` and the last result.
 */
export class SessionFixture {
  /** The conversation of every model request, in order. */
  readonly requests: Message[][] = [];
  /** Executions of `lookup` and `send_mail`, by idempotency key. */
  readonly executions: string[] = [];
  private gates = new Map<string, { entered: () => void; promise: Promise<void> }>();
  readonly model: ScriptedModel = scriptedModel((request) => {
    const messages = request.messages;
    this.requests.push(messages.map((message) => ({ ...message })));
    const last = messages[messages.length - 1]!;
    if (last.role === 'tool') return { content: `done: ${last.content}` };
    const text = last.content;
    if (text.startsWith('weather '))
      return { toolCalls: [{ name: 'lookup', arguments: { city: text.slice('weather '.length) } }] };
    if (text.startsWith('mail '))
      return { toolCalls: [{ name: 'send_mail', arguments: { to: text.slice('mail '.length) } }] };
    if (text === 'recall') {
      const said = messages.slice(0, -1).filter((message) => message.role === 'user');
      return { content: `you said: ${said.map((message) => message.content).join(' | ')}` };
    }
    if (text === 'fail') return new KeelError('provider.bad_request', 'The model refused the request');
    return { content: `noted: ${text}` };
  });

  /** Makes the next `lookup` of `city` wait, before its effect, until `release` is called. */
  gate(city: string): Gate {
    let release!: () => void;
    let entered!: () => void;
    const promise = new Promise<void>((resolve) => {
      release = resolve;
    });
    const enteredPromise = new Promise<void>((resolve) => {
      entered = resolve;
    });
    this.gates.set(city, { entered, promise });
    return { entered: enteredPromise, release };
  }

  /** The user messages of the `index`th model request (0 is the first; negative counts from the end). */
  userMessagesSent(index: number): string[] {
    const request = this.requests.at(index) ?? [];
    return request.filter((message) => message.role === 'user').map((message) => message.content);
  }

  tools() {
    const lookup = tool({
      name: 'lookup',
      description: 'Weather for a city',
      input: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } as const,
      idempotent: true,
      execute: async ({ city }: { city: string }, context) => {
        const gate = this.gates.get(city);
        if (gate !== undefined) {
          this.gates.delete(city);
          gate.entered();
          await gate.promise;
        }
        this.executions.push(context.idempotencyKey);
        return `${city}: sunny`;
      },
    });
    const sendMail = tool({
      name: 'send_mail',
      description: 'Sends a mail',
      input: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] } as const,
      needsApproval: ({ to }: { to: string }) => !to.endsWith('@example.com'),
      execute: async ({ to }: { to: string }, context) => {
        this.executions.push(context.idempotencyKey);
        return `sent to ${to}`;
      },
    });
    return [lookup, sendMail];
  }

  /** An agent of this fixture on `store`, with its own owner and clock (a process of its own). */
  agent(
    store: RunStore,
    options: {
      owner: string;
      clock?: FakeClock;
      durability?: Omit<DurabilityOptions, 'owner'>;
      conversationManager?: AgentOptions['conversationManager'];
    },
  ): Agent {
    return agent({
      name: 'session-fixture',
      model: this.model,
      tools: this.tools(),
      instructions: 'You remember what the user said.',
      clock: options.clock ?? new FakeClock(SESSION_START_MS),
      retry: { maxAttempts: 1, toolMaxAttempts: 1 },
      store,
      durability: { storeMaxAttempts: 1, ...options.durability, owner: options.owner },
      ...(options.conversationManager === undefined
        ? {}
        : { conversationManager: options.conversationManager }),
    });
  }
}
