import type { PolicyContext, SignalInput } from './policy.js';

/** A signal that never aborts, shared by every call made without one. */
export const NEVER_ABORTED_SIGNAL: AbortSignal = new AbortController().signal;

const ROOT_CONTEXT: PolicyContext = Object.freeze({ signal: NEVER_ABORTED_SIGNAL, aborted: false, attempt: 1 });

class SignalContext implements PolicyContext {
  constructor(
    readonly signal: AbortSignal,
    readonly attempt: number,
  ) {}
  get aborted(): boolean {
    return this.signal.aborted;
  }
}

class AttemptContext implements PolicyContext {
  constructor(
    private readonly parent: PolicyContext,
    readonly attempt: number,
  ) {}
  get signal(): AbortSignal {
    return this.parent.signal;
  }
  get aborted(): boolean {
    return this.parent.aborted;
  }
}

/** True when `input` is a policy context rather than a bare AbortSignal. */
function isContext(input: AbortSignal | PolicyContext): input is PolicyContext {
  return 'attempt' in input;
}

/** The context to hand a policy's function: the given context itself, or one wrapping a bare signal. */
export function toContext(input: SignalInput): PolicyContext {
  if (input === undefined) return ROOT_CONTEXT;
  return isContext(input) ? input : new SignalContext(input, 1);
}

/** A context that delegates its signal to `parent` (lazily) with another attempt number. */
export function withAttempt(parent: PolicyContext, attempt: number): PolicyContext {
  return attempt === parent.attempt ? parent : new AttemptContext(parent, attempt);
}

/** Whether `input` is aborted, without creating a signal. */
export function isAborted(input: SignalInput): boolean {
  return input !== undefined && input.aborted;
}
