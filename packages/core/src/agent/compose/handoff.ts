import { KeelError } from '../../errors/keel-error.js';
import type { Message } from '../../spec/model.js';
import type { Tool } from '../../spec/tool.js';
import { stopRun } from '../run/directives.js';
import { tool } from '../tools/tool.js';
import type { ChildAgent } from './child-agent.js';
import { parentRunOf, runChild } from './run-child.js';

/** Options of {@link handoff}. */
export interface HandoffOptions {
  /** The tool's name, as the model calls it. Defaults to `transfer_to_<agent name>` (other characters as `_`). */
  name?: string;
  /** Tells the model when to hand the conversation over. Defaults to `Hand the conversation over to <agent name>`. */
  description?: string;
  /**
   * Chooses what the receiving agent is given of the conversation (its own instructions come first). Defaults to the
   * conversation without the system message, and without the tool calls of the step that hands over (their results
   * do not exist yet). Must return at least one message.
   */
  inputFilter?: (messages: readonly Message[]) => readonly Message[];
}

/** The input of a handoff tool: why the conversation is handed over, for the record. */
export interface HandoffInput {
  reason?: string;
}

/**
 * A handoff: a tool that transfers the conversation to `target`, which then answers instead of the agent that
 * handed over. The target runs as a child run of the calling run (durable, budgets and cancellation from the parent,
 * like {@link agentTool}'s), on the conversation so far; its output becomes the parent's output, the parent's run
 * ends `completed` with stop detail `handoff to <name>`, and the report's `children.answeredBy` names the agent that
 * answered. A target that fails gives the model a tool error instead, so that it can answer itself. Handoffs and
 * agent tools nest: the target can hand over or call agents in turn.
 *
 * Usually given through the agent's `handoffs` option; `handoff(target, options)` adds a filter or a name.
 *
 * @example
 *   const triage = agent({ name: 'triage', model, store, handoffs: [support, handoff(billing, { inputFilter })] });
 */
export function handoff(target: ChildAgent, options: HandoffOptions = {}): Tool<HandoffInput, unknown> {
  if (typeof target !== 'object' || target === null || typeof target.run !== 'function') {
    throw new KeelError('config.invalid', 'handoff(target): target must be an agent made by agent()', {
      data: { where: 'handoff()', option: 'target' },
    });
  }
  const { inputFilter = defaultHandoffFilter } = options;
  if (typeof inputFilter !== 'function')
    throw new KeelError('config.invalid', 'handoff(): inputFilter must be a function (messages) => messages');
  const name = options.name ?? `transfer_to_${target.name.replace(/[^A-Za-z0-9_-]/g, '_')}`.slice(0, 64);
  return tool<HandoffInput, unknown>({
    name,
    description: options.description ?? `Hand the conversation over to ${target.name}, who answers the user`,
    input: {
      type: 'object',
      properties: { reason: { type: 'string', description: 'Why the conversation is handed over' } },
    },
    idempotent: target.store !== undefined,
    timeoutMs: 600_000,
    async execute(_input, context) {
      const parent = parentRunOf(context);
      const messages = parent?.messages ?? [];
      const input = inputFilter(messages);
      if (!Array.isArray(input) || input.length === 0) {
        throw new KeelError('config.invalid', `handoff "${name}": the input filter returned no messages`);
      }
      // Once per handoff: a retried attempt of the same call hands over the same conversation again.
      if (context.attempt === 1) parent?.handedOff(target.name);
      const result = await runChild(target, context, name, 'handoff', input);
      throw stopRun(
        `handoff to ${target.name}`,
        result.output === undefined ? null : (result.output as never),
      );
    },
  });
}

/**
 * The conversation a handoff passes on by default: without system messages, and without the tool calls of the last
 * assistant message (the step handing over, whose results do not exist yet); that message is dropped when nothing
 * else is left of it.
 */
export function defaultHandoffFilter(messages: readonly Message[]): Message[] {
  const kept = messages.filter((message) => message.role !== 'system');
  const last = kept.at(-1);
  if (last?.role === 'assistant' && last.toolCalls !== undefined) {
    kept.pop();
    if (last.content !== '') kept.push({ role: 'assistant', content: last.content });
  }
  return kept;
}
