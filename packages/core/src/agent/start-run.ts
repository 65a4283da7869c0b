import type { Message } from '../spec/model.js';
import { startDurableRun } from './durable-start.js';
import {
  checkMessageParts,
  checkOptions,
  driveRun,
  type RunOptions,
  type RunResult,
  refuseRunOption,
  setRunToolChoice,
} from './loop/run.js';
import type { AgentRuntime } from './run/agent-runtime.js';
import type { RunAbort, RunRegistry } from './run/cancellation.js';
import { parentRunIn } from './run/child-runs.js';
import { newRunId } from './run/run-id.js';
import { createRunState } from './run/run-state.js';

/**
 * Runs the agent once. Invalid arguments throw `config.invalid` before anything starts; from then on every outcome
 * is a {@link RunResult}.
 */
export async function executeRun<Output>(
  runtime: AgentRuntime,
  registry: RunRegistry,
  agentRuns: Map<string, RunAbort>,
  input: string | readonly Message[],
  options: RunOptions = {},
): Promise<RunResult<Output>> {
  checkOptions(options);
  const messages = initialMessages(runtime, input);
  const { clock, limits } = runtime;
  const startedAtMs = clock.now();
  const state = createRunState({
    runId: options.runId ?? newRunId(),
    agentName: runtime.name,
    messages,
    startedAtMs,
    deadlineAtMs: startedAtMs + limits.timeoutMs,
  });
  setRunToolChoice(runtime, state, options);
  const parent = parentRunIn(options);
  // A child run without a tenant or priority of its own takes its parent's.
  const tenant = options.tenant ?? parent?.tenant;
  const priority = options.priority ?? parent?.priority;
  if (tenant !== undefined) state.tenant = tenant;
  if (priority !== undefined && priority !== 0) state.priority = priority;
  if (parent !== undefined) {
    // A child run's deadline is its own or its parent's, whichever comes first.
    state.parentRunId = parent.runId;
    state.parentCallKey = parent.callKey;
    state.deadlineAtMs = Math.min(state.deadlineAtMs, parent.deadlineAtMs);
  }
  if (runtime.durability !== undefined) {
    return startDurableRun<Output>(runtime, runtime.durability, registry, agentRuns, state, options);
  }
  return driveRun<Output>(runtime, registry, agentRuns, state, options, true);
}

/**
 * The conversation a run starts from: the instructions, then the input (a prompt, or earlier messages). Throws
 * `config.invalid` for an input that is neither.
 */
export function initialMessages(
  runtime: Pick<AgentRuntime, 'instructions'>,
  input: string | readonly Message[],
): Message[] {
  const messages: Message[] = [];
  const instructions = runtime.instructions;
  if (typeof input === 'string') {
    if (instructions !== undefined) messages.push({ role: 'system', content: instructions });
    messages.push({ role: 'user', content: input });
    return messages;
  }
  if (!Array.isArray(input) || input.length === 0) {
    refuseRunOption('input must be a string, or a non-empty array of messages ({ role, content })');
  }
  input.forEach((message, index) => {
    const role = (message as { role?: unknown })?.role;
    if (
      !['system', 'user', 'assistant', 'tool'].includes(role as string) ||
      typeof message.content !== 'string'
    ) {
      refuseRunOption(
        `input[${index}] must be a message with role system, user, assistant or tool, and string content`,
      );
    }
    checkMessageParts(message, index);
  });
  if (instructions !== undefined && input[0]!.role !== 'system')
    messages.push({ role: 'system', content: instructions });
  for (const message of input) messages.push(message);
  return messages;
}
