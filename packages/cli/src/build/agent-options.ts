import type { AgentFile } from '@keel/agent-file';
import type {
  Agent,
  AgentOptions,
  Clock,
  DurabilityOptions,
  ModelProvider,
  RunStore,
  Tool,
  ToolSource,
} from '@keel/core';
import type { AgentPolicies } from './fleet-policies.js';

/** What an agent file leaves to the command that builds its agent. */
export interface AgentParts {
  model: ModelProvider;
  fallbacks: readonly ModelProvider[];
  /** Tools, and tool sources (the MCP toolsets of the file). */
  tools: readonly (Tool | ToolSource)[];
  store: RunStore;
  /** How runs hold their leases. Defaults to the agent's defaults (one owner per process). */
  durability?: DurabilityOptions;
  /** The agent's clock (leases, timeouts). Defaults to the system clock. */
  clock?: Clock;
  /** Breakers and retry budget shared beyond the process (`keel worker`). Defaults to the agent's own. */
  policies?: AgentPolicies;
  /** The agents of the file's `handoffs:`, built. Defaults to none. */
  handoffs?: readonly Agent<string>[];
}

/**
 * The options of the agent an agent file describes, given its models, tools and store: the one mapping from a file
 * to an agent, shared by `keel run` and `keel chaos` so that chaos measures the settings `keel run` uses.
 */
export function agentOptionsFromFile(file: AgentFile, parts: AgentParts): AgentOptions<string> {
  return {
    name: file.name,
    model: parts.model,
    fallbacks: parts.fallbacks,
    tools: parts.tools,
    ...(parts.handoffs === undefined || parts.handoffs.length === 0 ? {} : { handoffs: parts.handoffs }),
    store: parts.store,
    ...(parts.durability === undefined ? {} : { durability: parts.durability }),
    ...(parts.clock === undefined ? {} : { clock: parts.clock }),
    ...(file.instructions === undefined ? {} : { instructions: file.instructions }),
    ...(file.toolChoice === undefined ? {} : { toolChoice: file.toolChoice }),
    ...(Object.keys(file.limits).length === 0 ? {} : { limits: file.limits }),
    ...file.timeouts,
    ...(parts.policies === undefined
      ? {}
      : { breaker: parts.policies.breaker, toolBreaker: parts.policies.toolBreaker }),
    ...retryOptions(file, parts.policies),
    ...(file.budgets === undefined
      ? {}
      : {
          budgets: {
            ...file.budgets,
            ...(parts.policies === undefined ? {} : { store: parts.policies.budgetStore }),
          },
        }),
    ...(file.pace === true
      ? { pace: parts.policies === undefined ? true : { store: parts.policies.paceStore } }
      : {}),
  };
}

function retryOptions(
  file: AgentFile,
  policies: AgentPolicies | undefined,
): Pick<AgentOptions<string>, 'retry'> {
  const retry = {
    ...(file.retry.maxAttempts === undefined ? {} : { maxAttempts: file.retry.maxAttempts }),
    ...(policies === undefined ? {} : { budget: policies.budget }),
  };
  return Object.keys(retry).length === 0 ? {} : { retry };
}
