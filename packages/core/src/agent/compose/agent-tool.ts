import { KeelError } from '../../errors/keel-error.js';
import type { JsonSchemaInput, SchemaLike } from '../../schemas/schema.js';
import type { Message } from '../../spec/model.js';
import type { Tool } from '../../spec/tool.js';
import type { RunResult } from '../loop/run.js';
import { tool } from '../tools/tool.js';
import type { ChildAgent } from './child-agent.js';
import { runChild } from './run-child.js';

/** The input of an agent tool without an `input` schema: the task, in words. */
export interface AgentToolPrompt {
  prompt: string;
}

const PROMPT_SCHEMA: JsonSchemaInput = {
  type: 'object',
  properties: {
    prompt: { type: 'string', description: 'The task for the agent, with what it needs to know' },
  },
  required: ['prompt'],
  additionalProperties: false,
};

/** Options of {@link agentTool}. */
export interface AgentToolOptions<Input, Output> {
  /** The tool's name, as the model calls it; 1 to 64 letters, digits, `_` or `-`. Required. */
  name: string;
  /** Tells the model what the agent does and when to hand it a task. Required, non-empty. */
  description: string;
  /** The tool's input schema (see `tool()`). Defaults to `{ prompt: string }`. */
  input?: SchemaLike<Input>;
  /**
   * Turns the tool's input into the child run's input (a prompt, or messages). Defaults to `input.prompt` with the
   * default schema, else the input as JSON text.
   */
  prompt?: (input: Input) => string | readonly Message[];
  /**
   * Turns the child's completed result into the tool's result, which the parent's model reads. Defaults to the
   * child's output as it is: the validated value when the child has an `outputSchema`, else its text.
   */
  output?: (result: RunResult<unknown>) => Output;
  /**
   * Longest a call may run, the child run included, in milliseconds; the parent's deadline bounds it too. Defaults to
   * 600_000 (the default run timeout).
   */
  timeoutMs?: number;
  /** Whether a human approves each call before the child starts (see `tool()`). Defaults to false. */
  needsApproval?: boolean | ((input: Input) => boolean | Promise<boolean>);
}

/**
 * An agent as a tool: each call starts a child run of `child` in its store, linked to the calling run
 * (`parentRunId`), with a run id derived from the call's idempotency key. The tool's result is the child's output; a
 * child that fails gives the parent's model a tool error with the child's error code and guidance, so that it can
 * recover. The child draws from the parent's retry budget and deadline and is cancelled with it; approvals and
 * decisions it waits for interrupt the parent, under the same keys (answer them with the parent's `resume`).
 *
 * A child with a `store` makes the call durable and the tool idempotent: called again with the same key (the parent
 * resumed after a crash), it resumes the child from its checkpoint, and a child that ended is not run again. A child
 * with no store runs as a plain tool call, not idempotent.
 *
 * @example
 *   const research = agent({ name: 'research', model, tools: [search], store });
 *   const triage = agent({
 *     name: 'triage', model, store,
 *     tools: [agentTool(research, { name: 'research', description: 'Looks facts up; give it a question' })],
 *   });
 */
export function agentTool<Input = AgentToolPrompt, Output = unknown>(
  child: ChildAgent,
  options: AgentToolOptions<Input, Output>,
): Tool<Input, Output> {
  if (typeof child !== 'object' || child === null || typeof child.run !== 'function') {
    throw new KeelError(
      'config.invalid',
      'agentTool(child, options): child must be an agent made by agent()',
      {
        data: { where: 'agentTool()', option: 'child' },
      },
    );
  }
  if (typeof options !== 'object' || options === null) {
    throw new KeelError('config.invalid', 'agentTool(child, options) needs options { name, description }', {
      data: { where: 'agentTool()', option: 'options' },
    });
  }
  const { name, prompt, output, input, timeoutMs = 600_000, needsApproval } = options;
  if (prompt !== undefined && typeof prompt !== 'function')
    throw new KeelError(
      'config.invalid',
      `agent tool "${name}": prompt must be a function (input) => string`,
    );
  if (output !== undefined && typeof output !== 'function')
    throw new KeelError(
      'config.invalid',
      `agent tool "${name}": output must be a function (result) => value`,
    );
  const toInput =
    prompt ??
    ((value: Input): string =>
      input === undefined ? (value as AgentToolPrompt).prompt : JSON.stringify(value));
  return tool<Input, Output>({
    name,
    description: options.description,
    input: input ?? (PROMPT_SCHEMA as SchemaLike<Input>),
    idempotent: child.store !== undefined,
    timeoutMs,
    ...(needsApproval === undefined ? {} : { needsApproval }),
    async execute(value, context) {
      const result = await runChild(child, context, name, 'tool', toInput(value));
      return output === undefined ? (result.output as Output) : output(result);
    },
  });
}
