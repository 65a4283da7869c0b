import { type AgentBreakerOptions, type RetryBudget, retryBudget } from '@keel/core';
import type { BreakerStoreFactory, BudgetStore, PaceStore } from '@keel/core/store';
import { type RedisState, redisState, type UnavailableRule } from '@keel/redis';

/** Policy state an agent keeps beyond its process: its breakers and its retry budget. */
export interface AgentPolicies {
  /** The model breakers' options (their store). */
  breaker: AgentBreakerOptions;
  /** The tool breakers' options (their store). */
  toolBreaker: AgentBreakerOptions;
  /** The retry budget every run of the agent draws from, beside its own. */
  budget: RetryBudget;
  /** Where the agent's token and cost budgets (`budgets` in its file) keep their counters: the fleet's Redis. */
  budgetStore: BudgetStore;
  /** The provider windows the agent paces its calls by (`pace: true` in its file): one per provider/model for the fleet. */
  paceStore: PaceStore;
}

/** The policy state of a fleet's workers, shared through Redis. */
export interface FleetPolicies {
  /** The policies of one agent: model breakers shared with every agent, tool breakers with the same agent only. */
  forAgent(agentName: string): AgentPolicies;
  /** The fleet's retry budget, the one every agent's runs draw from. */
  readonly budget: RetryBudget;
  /** Where the shared state stands, and its events (`unavailable`, `recovered`). */
  readonly state: RedisState;
  close(): Promise<void>;
}

/** What {@link fleetPolicies} needs. */
export interface FleetPolicyOptions {
  /** The fleet's Redis. */
  url: string;
  /** Separates fleets on one Redis (`keel:<namespace>:...` keys). Defaults to `'default'`. */
  namespace?: string;
  /** While Redis cannot be reached: go on with local state (`'local'`), or refuse calls (`'closed'`). */
  onUnavailable?: UnavailableRule;
}

/**
 * Shares the breakers and the retry budget of a fleet's agents through Redis, so that the fleet probes a dead
 * provider once per half-open period and its retries stay within one budget:
 * - a model's breaker is keyed by provider and model (`openai/gpt-4.1-mini`), shared by every agent that calls it,
 *   as the provider is down for all of them;
 * - a tool's breaker is keyed by agent and tool (two agent files may give one name to different tools);
 * - one retry budget for the fleet, core's `retryBudget()` defaults (retries at most 20% of requests, plus 1 a second
 *   in reserve, over 10 s), beside each run's own 10 retries.
 */
export function fleetPolicies(options: FleetPolicyOptions): FleetPolicies {
  const state = redisState({
    url: options.url,
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
    ...(options.onUnavailable === undefined ? {} : { onUnavailable: options.onUnavailable }),
  });
  const breakerStore = state.breakerStore();
  const budget = retryBudget({ store: state.retryBudgetStore({ name: 'fleet' }) });
  const budgetStore = state.budgetStore();
  const paceStore = state.paceStore();
  return {
    state,
    budget,
    forAgent(agentName) {
      const agentKey = encodeURIComponent(agentName);
      const toolStore: BreakerStoreFactory = (storeOptions) =>
        breakerStore({ ...storeOptions, name: `agent.${agentKey}.${storeOptions.name}` });
      return {
        breaker: { store: breakerStore },
        toolBreaker: { store: toolStore },
        budget,
        budgetStore,
        paceStore,
      };
    },
    close: () => state.close(),
  };
}
