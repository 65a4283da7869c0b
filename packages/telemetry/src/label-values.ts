import { isErrorCode } from '@keel/core';

/** Longest label value taken from configuration (an agent, model, tool or guardrail name); longer ones are cut. */
export const MAX_LABEL_VALUE_CHARS = 128;

/**
 * `error.type` for a keel error code: the code itself (codes are a closed, documented set), or `_OTHER` (the GenAI
 * conventions' fallback value) for anything else, so that no free text becomes a label.
 */
export function errorType(code: string): string {
  return isErrorCode(code) ? code : '_OTHER';
}

/** A name from configuration as a label value: at most {@link MAX_LABEL_VALUE_CHARS} characters. */
export function nameLabel(name: string): string {
  return name.length <= MAX_LABEL_VALUE_CHARS ? name : name.slice(0, MAX_LABEL_VALUE_CHARS);
}

/** A model key as events give it (`provider/model`), split at its first slash. */
export function modelParts(key: string): { readonly provider: string; readonly model: string } {
  const slash = key.indexOf('/');
  if (slash < 0) return { provider: key, model: key };
  return { provider: key.slice(0, slash), model: key.slice(slash + 1) };
}

/**
 * What a breaker of an agent guards, from its name: an agent names a tool's breaker `tool:<name>` and a model's
 * `provider/model`.
 */
export function breakerTarget(breakerName: string): {
  readonly kind: 'model' | 'tool';
  readonly name: string;
} {
  return breakerName.startsWith('tool:')
    ? { kind: 'tool', name: breakerName.slice('tool:'.length) }
    : { kind: 'model', name: breakerName };
}
