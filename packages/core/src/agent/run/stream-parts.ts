import type { ModelStreamPart } from '../../spec/model.js';

/** What `agent.stream()` hands a run besides its text deltas. */
export interface StreamLink {
  /** Receives the model's streamed parts other than text (reasoning, tool-call deltas). */
  readonly onStreamPart: (part: ModelStreamPart) => void;
  /**
   * Called before each step; when it returns a promise, the step waits for it (the reader is behind). The run's
   * cancellation and deadline still end the wait.
   */
  readonly beforeStep: () => Promise<void> | undefined;
}

/** Where the links of runs that stream go, keyed by the run's `onTextDelta` (see {@link linkStream}). */
const links = new WeakMap<(delta: string) => void, StreamLink>();

/**
 * Pairs a run's `onTextDelta` with the rest of what `agent.stream()` needs of the run, so that it gets it without a
 * public run option: the run looks the link up by its text callback.
 */
export function linkStream(onTextDelta: (delta: string) => void, link: StreamLink): void {
  links.set(onTextDelta, link);
}

/** The link paired with this `onTextDelta`, if any. */
export function streamLinkOf(onTextDelta: ((delta: string) => void) | undefined): StreamLink | undefined {
  return onTextDelta === undefined ? undefined : links.get(onTextDelta);
}
