import { KeelError, type ModelRequest } from '@keel/core';
import { rejectUnknownOptions } from '@keel/core/adapter';

/** Extended thinking, as `anthropic()` takes it. */
export interface ThinkingOptions {
  /**
   * The most tokens Claude may spend thinking before it answers, sent as `thinking.budget_tokens`: at least 1024, and
   * below the request's `max_tokens` (which counts thinking and answer together), unless the `anthropic-beta` header
   * asks for interleaved thinking (`interleaved-thinking-2025-05-14`), where the budget may exceed it. Required.
   */
  budgetTokens: number;
}

/** Thinking as the request body needs it. */
export interface ThinkingSettings {
  budgetTokens: number;
  /** Interleaved thinking (beta): the budget is not bounded by `max_tokens`. */
  interleaved: boolean;
}

/** The smallest budget the API accepts. */
export const MIN_THINKING_BUDGET_TOKENS = 1024;

const THINKING_OPTIONS = Object.keys({ budgetTokens: true } satisfies Record<keyof ThinkingOptions, true>);

/**
 * Checks the `thinking` option against the provider's default `max_tokens`, so that a budget that cannot work fails
 * when the provider is made, not at its first request. Undefined when thinking is off.
 */
export function checkThinking(
  thinking: ThinkingOptions | undefined,
  maxOutputTokens: number,
  headers: Readonly<Record<string, string>>,
  fail: (message: string) => never,
): ThinkingSettings | undefined {
  if (thinking === undefined) return undefined;
  if (typeof thinking !== 'object' || thinking === null || Array.isArray(thinking))
    fail('thinking must be an object such as { budgetTokens: 2048 }');
  rejectUnknownOptions(thinking, THINKING_OPTIONS, { where: 'anthropic() thinking' });
  const { budgetTokens } = thinking;
  if (!Number.isInteger(budgetTokens) || budgetTokens < MIN_THINKING_BUDGET_TOKENS) {
    fail(
      `thinking.budgetTokens must be an integer of at least ${MIN_THINKING_BUDGET_TOKENS} (the API's minimum), got ${String(budgetTokens)}`,
    );
  }
  const interleaved = /\binterleaved-thinking-/.test(headers['anthropic-beta'] ?? '');
  const settings = { budgetTokens, interleaved };
  const problem = budgetProblem(settings, maxOutputTokens);
  if (problem !== undefined) fail(`${problem}: raise maxOutputTokens or lower thinking.budgetTokens`);
  return settings;
}

/**
 * Checks one request against the thinking settings: its `max_tokens` must leave room for the answer beyond the
 * budget, and it may not ask for what the API refuses with thinking on (a forced tool choice, a temperature other
 * than 1). `config.invalid` saying what to change, before anything is sent.
 */
export function checkThinkingRequest(
  thinking: ThinkingSettings,
  request: ModelRequest,
  maxTokens: number,
  provider: string,
): void {
  const fail = (message: string): never => {
    throw new KeelError('config.invalid', `${provider}: ${message}`, { provider });
  };
  const problem = budgetProblem(thinking, maxTokens);
  if (problem !== undefined) fail(`${problem}: raise the request's maxOutputTokens`);
  const choice = request.toolChoice;
  if (choice === 'required' || (typeof choice === 'object' && choice !== null)) {
    fail(
      'with extended thinking the API accepts tool choice "auto" or "none" only: drop toolChoice or turn thinking off',
    );
  }
  if (request.temperature !== undefined && request.temperature !== 1) {
    fail(
      `with extended thinking the API accepts no temperature but 1, got ${request.temperature}: drop temperature or turn thinking off`,
    );
  }
}

function budgetProblem(thinking: ThinkingSettings, maxTokens: number): string | undefined {
  if (thinking.interleaved || thinking.budgetTokens < maxTokens) return undefined;
  return `thinking.budgetTokens (${thinking.budgetTokens}) must be below max_tokens (${maxTokens}), which counts thinking and answer together`;
}
