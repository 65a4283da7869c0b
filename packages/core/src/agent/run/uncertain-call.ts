import type { PendingToolCall, UncertainCall } from './run-state.js';

/** JSON with object keys sorted, so that equal arguments give the same text whatever the model's key order. */
export function canonicalArguments(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalArguments).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalArguments(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The arguments of a call as the model sent them, canonical (the raw text when it is not JSON). */
export function argumentsKeyOf(argumentsText: string): string {
  try {
    return canonicalArguments(JSON.parse(argumentsText));
  } catch {
    return argumentsText;
  }
}

/** The record of `pending` (of step `step`) as a call whose outcome is unknown, after a failure coded `errorCode`. */
export function uncertainCallOf(pending: PendingToolCall, step: number, errorCode: string): UncertainCall {
  return {
    idempotencyKey: pending.idempotencyKey,
    toolName: pending.call.name,
    argumentsKey: argumentsKeyOf(pending.call.arguments),
    step,
    callIndex: pending.callIndex,
    errorCode,
  };
}
