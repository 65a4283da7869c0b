import { consecutive } from '../policies/breaker/consecutive.js';
import type { BreakerStrategy } from '../policies/breaker/strategy.js';
import { timeWindow } from '../policies/breaker/time-window.js';
import { type CircuitBreaker, circuitBreaker } from '../policies/circuit-breaker.js';
import type { Clock } from '../policies/clock.js';
import { retryMaker } from '../policies/retry.js';
import { retryBudgetMaker } from '../policies/retry-budget.js';
import { timeout } from '../policies/timeout.js';
import type { Tool } from '../spec/tool.js';
import type { AgentBreakerOptions, AgentOptions, AgentRetryOptions } from './agent-options.js';
import type {
  BreakerWatcher,
  FallbackSlot,
  ModelSlot,
  RetrySettings,
  ToolSlot,
} from './run/agent-runtime.js';
import { agentConfigError, checkMilliseconds } from './run/config-error.js';
import { countsAgainstModel } from './run/failure-rules.js';
import { indexTools } from './tools/tool.js';
import { fallbackName } from './tools/tool-fallback.js';

/** The model chain: one slot (breaker, timeout) per provider and model, shared when a model appears twice. */
export function resolveModels(options: AgentOptions<unknown>, clock: Clock): ModelSlot[] {
  const fallbacks = options.fallbacks ?? [];
  if (!Array.isArray(fallbacks)) agentConfigError('fallbacks must be an array of model providers');
  const timeoutMs = options.modelTimeoutMs ?? 120_000;
  checkMilliseconds(timeoutMs, 'modelTimeoutMs');
  const modelTimeout = timeout(timeoutMs, { code: 'network.timeout', strategy: 'forced', clock });
  const slots = new Map<string, ModelSlot>();
  return [options.model, ...fallbacks].map((provider, index) => {
    const where = index === 0 ? 'model' : `fallbacks[${index - 1}]`;
    if (
      typeof provider?.generate !== 'function' ||
      typeof provider.provider !== 'string' ||
      typeof provider.model !== 'string'
    ) {
      agentConfigError(
        `${where} must be a model provider (an object with provider, model and generate), such as openai('gpt-4.1-mini')`,
      );
    }
    const key = `${provider.provider}/${provider.model}`;
    const existing = slots.get(key);
    if (existing !== undefined) return existing;
    const slot: ModelSlot = {
      kind: 'model',
      key,
      provider,
      breaker: makeBreaker(options.breaker, key, clock, 'breaker', timeoutMs, modelBreakerStrategy),
      timeout: modelTimeout,
      watchers: watcherSet(),
    };
    forwardBreakerMoves(slot);
    slots.set(key, slot);
    return slot;
  });
}

/** Makes the slots of an agent's tools, keeping the slot of a tool value it has seen (see {@link ToolSlots.index}). */
export interface ToolSlots {
  /**
   * One slot (breaker, timeout) per tool, by name, with its fallbacks resolved. A fallback tool the agent also offers
   * to the model shares that tool's slot (one breaker for one dependency); one it does not offer gets a slot of its
   * own, shared by every tool that falls back to it. A tool value indexed by the previous call keeps its slot (its
   * breaker spans runs and tool list updates); slots of tools no longer listed are dropped.
   */
  index(tools: readonly Tool[]): Map<string, ToolSlot>;
}

/** The agent's tool slot maker; `onBreaker` receives the breaker of every slot made. */
export function toolSlots(
  options: AgentOptions<unknown>,
  clock: Clock,
  onBreaker: (breaker: CircuitBreaker) => void,
): ToolSlots {
  const defaultTimeoutMs = options.toolTimeoutMs ?? 60_000;
  checkMilliseconds(defaultTimeoutMs, 'toolTimeoutMs');
  let known = new Map<Tool, ToolSlot>();
  const makeSlot = (name: string, entry: Tool): ToolSlot & { fallbacks: FallbackSlot[] } => {
    const timeoutMs = entry.timeoutMs ?? defaultTimeoutMs;
    const slot = {
      kind: 'tool' as const,
      key: name,
      tool: entry,
      breaker: makeBreaker(
        options.toolBreaker,
        `tool:${name}`,
        clock,
        'toolBreaker',
        timeoutMs,
        toolBreakerStrategy,
      ),
      timeout: timeout(timeoutMs, {
        code: 'tool.timeout',
        strategy: 'forced',
        clock,
      }),
      watchers: watcherSet(),
      fallbacks: [] as FallbackSlot[],
    };
    forwardBreakerMoves(slot);
    if (slot.breaker !== undefined) onBreaker(slot.breaker);
    return slot;
  };
  return {
    index(tools) {
      const seen = known;
      const kept = new Map<Tool, ToolSlot>();
      const reuse = (name: string, entry: Tool) => {
        const existing = seen.get(entry);
        const slot = existing ?? makeSlot(name, entry);
        kept.set(entry, slot);
        return { slot, fresh: existing === undefined };
      };
      const slots = new Map<string, ToolSlot>();
      const fresh: (ToolSlot & { fallbacks: FallbackSlot[] })[] = [];
      for (const [name, entry] of indexTools(tools)) {
        const made = reuse(name, entry);
        slots.set(name, made.slot);
        if (made.fresh) fresh.push(made.slot as ToolSlot & { fallbacks: FallbackSlot[] });
      }
      const fallbackOnly = new Map<string, ToolSlot>();
      for (const slot of slots.values()) {
        // A kept slot's fallbacks were resolved when it was made; keep their slots too.
        for (const fallback of slot.fallbacks) {
          if (fallback.slot !== undefined && fallback.fallback.tool !== undefined) {
            kept.set(fallback.fallback.tool, fallback.slot);
            if (!slots.has(fallback.name)) fallbackOnly.set(fallback.name, fallback.slot);
          }
        }
      }
      for (const slot of fresh) {
        for (const fallback of slot.tool.fallbacks ?? []) {
          const target = fallback.tool;
          if (target === undefined) {
            slot.fallbacks.push({ name: fallbackName(fallback), fallback, slot: undefined });
            continue;
          }
          let targetSlot = slots.get(target.name) ?? fallbackOnly.get(target.name);
          if (targetSlot !== undefined && targetSlot.tool !== target) {
            agentConfigError(
              `tool "${slot.key}" falls back to a tool named "${target.name}" that is not the agent's tool of that name: give one of them another name`,
            );
          }
          if (targetSlot === undefined) {
            targetSlot = reuse(target.name, target).slot;
            fallbackOnly.set(target.name, targetSlot);
          }
          slot.fallbacks.push({ name: target.name, fallback, slot: targetSlot });
        }
      }
      known = kept;
      return slots;
    },
  };
}

/**
 * The agent's breaker defaults (see `AgentBreakerOptions`): open on a dependency that is down, not on a flaky one.
 * 10 failures in a row: at a 30% fault rate, 5 in a row somewhere among the ~150 calls of 50 concurrent runs is
 * likely (about 1 in 4), 10 in a row is not (about 1 in 5,000); a failure-rate window of 50% over 20 calls trips
 * more often still (about 2 in 3), as 20 calls at 30% often hold 10 failures. Open 5 s at first, doubling while
 * probes fail, up to 60 s: waiting runs (`retry.waitForOpenBreakerMs`) get through soon after a short outage, and a
 * long one sees one probe per period.
 */
const AGENT_BREAKER_THRESHOLD = 10;
const AGENT_OPEN_DURATION = { initialMs: 5_000, factor: 2, maxMs: 60_000 } as const;

/** A model's breaker: 10 failures in a row (see above). Made per breaker: a strategy holds no state, but is cheap. */
function modelBreakerStrategy(): BreakerStrategy {
  return consecutive({ threshold: AGENT_BREAKER_THRESHOLD });
}

/**
 * A tool's breaker: at least 90% of the calls that ended in the last 60 s failed, over at least 20 calls. A tool
 * that is down fails every call and opens it after 20 calls; one that is slow and flaky does not. A tool failing
 * half its calls by timing out (successes at once, failures after its timeout) ends its failures in bursts (the
 * timeouts of 50 concurrent runs end together), so 10 in a row happened often and opened the consecutive breaker;
 * 18 failures in 20 calls at a 50% fault rate happen about once in 5,000 windows, and a busy tool's window holds
 * many more calls, with a rate near 50%. Models keep `consecutive` (see above).
 */
function toolBreakerStrategy(): BreakerStrategy {
  return timeWindow({ windowMs: 60_000, buckets: 10, failureRateThreshold: 0.9, minimumCalls: 20 });
}

function makeBreaker(
  options: AgentBreakerOptions | false | undefined,
  name: string,
  clock: Clock,
  where: string,
  callTimeoutMs: number,
  defaultStrategy: () => BreakerStrategy,
) {
  if (options === false) return undefined;
  if (options !== undefined && (typeof options !== 'object' || options === null))
    agentConfigError(`${where} must be breaker options or false`);
  return circuitBreaker({
    isFailure: countsAgainstModel,
    strategy: options?.strategy ?? defaultStrategy(),
    halfOpenAfterMs: AGENT_OPEN_DURATION,
    // A probe is a real call: it may take as long as the call's own timeout before it counts as failed.
    probeTimeoutMs: Math.max(callTimeoutMs, 1_000),
    ...options,
    name,
    clock,
  });
}

/** Tells no run anything: it keeps a slot's watchers from emptying (see {@link watcherSet}). */
const IDLE_WATCHER: BreakerWatcher = { breakerMoved() {} };

/**
 * A slot's set of watching runs, which never empties: V8 reallocates a Set's table when it loses its last entry (a
 * runtime call), which a dependency used by one run at a time would pay at the end of every run.
 */
function watcherSet(): Set<BreakerWatcher> {
  return new Set([IDLE_WATCHER]);
}

/** A breaker's moves reach the runs that use it while they run (one subscription per breaker, not per run). */
function forwardBreakerMoves(slot: ModelSlot | ToolSlot): void {
  slot.breaker?.onStateChange((transition) => {
    for (const run of slot.watchers) run.breakerMoved(slot, transition);
  });
}

/** The `retry` option, checked, with the defaults filled in. */
export function resolveRetry(options: AgentRetryOptions, clock: Clock): RetrySettings {
  if (typeof options !== 'object' || options === null) agentConfigError('retry must be an object');
  const createRunBudget = retryBudgetMaker({
    maxRetries: 10,
    ratio: false,
    ...(options.runBudget ?? {}),
    clock,
  });
  const shared = options.budget;
  if (
    shared !== undefined &&
    (typeof shared.tryAcquireRetry !== 'function' || typeof shared.recordRequest !== 'function')
  ) {
    agentConfigError('retry.budget must be a RetryBudget, such as retryBudget()');
  }
  const modelMaxAttempts = options.maxAttempts ?? 3;
  const toolMaxAttempts = options.toolMaxAttempts ?? 3;
  if (!Number.isInteger(modelMaxAttempts) || modelMaxAttempts < 1)
    agentConfigError('retry.maxAttempts must be an integer of at least 1');
  if (!Number.isInteger(toolMaxAttempts) || toolMaxAttempts < 1)
    agentConfigError('retry.toolMaxAttempts must be an integer of at least 1');
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
  checkMilliseconds(maxRetryAfterMs, 'retry.maxRetryAfterMs', true);
  if (options.maxElapsedMs !== undefined) checkMilliseconds(options.maxElapsedMs, 'retry.maxElapsedMs');
  const waitForOpenBreakerMs = options.waitForOpenBreakerMs ?? 30_000;
  checkMilliseconds(waitForOpenBreakerMs, 'retry.waitForOpenBreakerMs', true);
  // Checked here once; each run makes its policies from these without checking again.
  const common = { delay: options.delay, random: options.random, maxRetryAfterMs, clock };
  return {
    makeModelRetry: retryMaker({
      ...common,
      maxAttempts: modelMaxAttempts,
      maxElapsedMs: options.maxElapsedMs,
    }),
    makeToolRetry: retryMaker({ ...common, maxAttempts: toolMaxAttempts }),
    waitForOpenBreakerMs,
    maxRetryAfterMs,
    createRunBudget,
    sharedBudget: shared,
  };
}
