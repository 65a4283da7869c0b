import { KeelError } from '../../errors/keel-error.js';
import { MAX_DELAY_MS } from '../../policies/delays.js';
import type { RunState } from './run-state.js';

/** The bounds of one run. Every run has them all: nothing waits or loops forever. */
export interface RunLimits {
  /** Most steps (model calls, corrections and continuations included) in one run; then `run.max_turns`. Defaults to 20. */
  maxTurns?: number;
  /** Longest a run may take, in milliseconds; then `run.timeout`. Defaults to 600_000 (10 minutes). */
  timeoutMs?: number;
  /**
   * Most tokens (input plus output, summed over the run's model calls) a run may spend; once passed, the run ends with
   * `run.token_budget` before its next step. Defaults to no limit.
   */
  maxTokens?: number;
  /** Most tool calls of one step running at once; the rest wait for a free place, in call order. Defaults to 4. */
  maxParallelToolCalls?: number;
  /** Times invalid structured output is sent back to the model before the run fails with `output.invalid`. Defaults to 2. */
  maxOutputCorrections?: number;
  /** With `onMaxTokens: 'continue'`: continuations asked for in a row before `provider.max_tokens`. Defaults to 3. */
  maxContinuations?: number;
}

/** Limits with every default filled in. */
export type ResolvedLimits = Required<RunLimits>;

/** The default limits. */
export const DEFAULT_LIMITS: Readonly<ResolvedLimits> = Object.freeze({
  maxTurns: 20,
  timeoutMs: 600_000,
  maxTokens: Number.POSITIVE_INFINITY,
  maxParallelToolCalls: 4,
  maxOutputCorrections: 2,
  maxContinuations: 3,
});

const KNOWN = Object.keys(DEFAULT_LIMITS);

/** Fills in defaults and checks each limit; a bad one throws `config.invalid` naming it. */
export function resolveLimits(limits: RunLimits | undefined, where: string): ResolvedLimits {
  if (limits === undefined) return DEFAULT_LIMITS;
  if (typeof limits !== 'object' || limits === null) {
    throw new KeelError(
      'config.invalid',
      `${where}: limits must be an object such as { maxTurns: 12, timeoutMs: 120_000 }`,
    );
  }
  for (const key of Object.keys(limits)) {
    if (!KNOWN.includes(key)) {
      throw new KeelError(
        'config.invalid',
        `${where}: unknown limit "${key}"; known limits: ${KNOWN.join(', ')}`,
      );
    }
  }
  const resolved: ResolvedLimits = { ...DEFAULT_LIMITS };
  for (const key of KNOWN as (keyof ResolvedLimits)[]) {
    const value = limits[key];
    if (value !== undefined) resolved[key] = value;
  }
  integer(where, 'maxTurns', resolved.maxTurns, 1);
  integer(where, 'maxParallelToolCalls', resolved.maxParallelToolCalls, 1);
  integer(where, 'maxOutputCorrections', resolved.maxOutputCorrections, 0);
  integer(where, 'maxContinuations', resolved.maxContinuations, 0);
  const { timeoutMs, maxTokens } = resolved;
  if (typeof timeoutMs !== 'number' || !(timeoutMs > 0) || timeoutMs > MAX_DELAY_MS) {
    throw new KeelError(
      'config.invalid',
      `${where}: limits.timeoutMs must be milliseconds above 0 and at most ${MAX_DELAY_MS}; got ${String(timeoutMs)}`,
    );
  }
  if (typeof maxTokens !== 'number' || !(maxTokens > 0)) {
    throw new KeelError(
      'config.invalid',
      `${where}: limits.maxTokens must be a number of tokens above 0; got ${String(maxTokens)}`,
    );
  }
  return resolved;
}

function integer(where: string, name: string, value: unknown, minimum: number): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum) {
    throw new KeelError(
      'config.invalid',
      `${where}: limits.${name} must be an integer of at least ${minimum}; got ${String(value)}`,
    );
  }
}

/** `run.max_turns` when the run may not start another step. */
export function turnLimitError(state: RunState, limits: ResolvedLimits): KeelError | undefined {
  if (state.step < limits.maxTurns) return undefined;
  return new KeelError('run.max_turns', `Run ${state.runId} reached its limit of ${limits.maxTurns} turns`, {
    data: { maxTurns: limits.maxTurns, steps: state.step },
    guidance: 'Raise limits.maxTurns, or give the agent tools and instructions that reach an answer sooner.',
  });
}

/** `run.token_budget` when the run has spent more tokens than it may. */
export function tokenBudgetError(state: RunState, limits: ResolvedLimits): KeelError | undefined {
  const spent = state.usage.inputTokens + state.usage.outputTokens;
  if (spent <= limits.maxTokens) return undefined;
  return new KeelError(
    'run.token_budget',
    `Run ${state.runId} spent ${spent} tokens, over its budget of ${limits.maxTokens}`,
    {
      data: { maxTokens: limits.maxTokens, spentTokens: spent },
      guidance:
        'Raise limits.maxTokens, or reduce the conversation (a conversation manager) to spend fewer tokens per step.',
    },
  );
}
