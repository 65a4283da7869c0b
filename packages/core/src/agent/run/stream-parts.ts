import type { ModelStreamPart } from '../../spec/model.js';

/** Where the model parts of a run that streams go, keyed by the run's `onTextDelta` (see {@link linkStreamParts}). */
const listeners = new WeakMap<(delta: string) => void, (part: ModelStreamPart) => void>();

/**
 * Pairs a run's `onTextDelta` with a receiver of the model's other streamed parts (reasoning, tool-call deltas), so
 * that `agent.stream()` gets them without a public run option: the run looks the receiver up by its text callback.
 */
export function linkStreamParts(
  onTextDelta: (delta: string) => void,
  onStreamPart: (part: ModelStreamPart) => void,
): void {
  listeners.set(onTextDelta, onStreamPart);
}

/** The receiver paired with this `onTextDelta`, if any. */
export function streamPartsOf(
  onTextDelta: ((delta: string) => void) | undefined,
): ((part: ModelStreamPart) => void) | undefined {
  return onTextDelta === undefined ? undefined : listeners.get(onTextDelta);
}
