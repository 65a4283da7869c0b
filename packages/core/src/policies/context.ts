import { isControlSignal } from '../errors/control.js';
import type { PolicyContext, PolicyFunction, SignalInput } from './policy.js';

/**
 * @deprecated No policy aborts with this reason any more; it will be removed in 0.2. Until 0.1, `timeout` and `hedge`
 * aborted the signal they made once the function settled, with this reason, so that a `fetch` Response returned
 * unread could no longer be read. Now they abort only what they abandon (a timed-out call, a hedge's losing
 * attempts, a cancelled call), with the timeout error or the caller's reason; a call that settles keeps its signal
 * alive. Code comparing `signal.reason === CALL_SETTLED_REASON` can drop the comparison: it is never true.
 */
export const CALL_SETTLED_REASON: DOMException = Object.freeze(
  new DOMException(
    'The policy call this signal belongs to has settled; work started with the signal is no longer wanted',
    'AbortError',
  ),
);

/** A signal that never aborts, shared by every call made without one. */
export const NEVER_ABORTED_SIGNAL: AbortSignal = new AbortController().signal;

const ROOT_CONTEXT: PolicyContext = Object.freeze({
  signal: NEVER_ABORTED_SIGNAL,
  aborted: false,
  attempt: 1,
});

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

/**
 * A context that tells its own abort to listeners, without an AbortSignal: an agent run's abort switch. A policy that
 * must follow its caller's abort (a forced timeout) uses these instead of a listener on `signal`, so that the context
 * need not make its AbortSignal (microseconds each) nor take an EventTarget listener per call. A listener is called
 * once, synchronously, when the context aborts; by then `aborted` is true and `signal` (made on read) is aborted with
 * the reason.
 */
export interface AbortFollowable extends PolicyContext {
  addAbortListener(listener: () => void): void;
  removeAbortListener(listener: () => void): void;
}

/** True when `context` tells its abort to listeners itself (see {@link AbortFollowable}). */
export function isAbortFollowable(context: PolicyContext): context is AbortFollowable {
  return typeof (context as Partial<AbortFollowable>).addAbortListener === 'function';
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
  return input?.aborted === true;
}

/**
 * Runs `fn` with `context`. A failure after the context aborted becomes the abort's reason (whatever the function
 * threw because of it, the caller gets their own reason back); a control signal passes as it is. `onSettled` runs
 * once the function has settled either way, so that a policy frees what it holds without a second promise.
 */
export async function runInContext<T>(
  fn: PolicyFunction<T>,
  context: PolicyContext,
  onSettled?: () => void,
): Promise<T> {
  try {
    return await fn(context);
  } catch (error) {
    if (!isControlSignal(error) && context.aborted) throw context.signal.reason;
    throw error;
  } finally {
    onSettled?.();
  }
}
