import type { ErrorCategory, ErrorCode } from '../errors/codes.js';
import type { JsonValue, KeelError } from '../errors/keel-error.js';
import type { SerializedError } from '../errors/serialize.js';
import type { JsonSchema } from './model.js';

/** One problem found when validating a tool's input. */
export interface ValidationIssue {
  /** Where the problem is, as a JSON path such as `$.city`. */
  path: string;
  message: string;
}

/** What validating a tool's input produced. */
export type ValidationResult<T> = { success: true; value: T } | { success: false; issues: ValidationIssue[] };

/** How far a running tool call has come, as the tool reports it (an MCP server's progress notifications, say). */
export interface ToolProgress {
  /** Progress so far; it should grow with each report. */
  readonly progress: number;
  /** The total `progress` is heading for, when known. */
  readonly total?: number;
  /** A short note for people watching the run. */
  readonly message?: string;
}

/** What a tool is handed besides its input. */
export interface ToolContext {
  /**
   * Aborted on cancellation or when the tool's timeout elapses. A tool should stop at once. The run loop makes it on
   * first read, through an accessor on the context's prototype, so `{ ...context }` does not copy it: a tool that
   * hands its context on copies the signal by name (`{ ...context, signal: context.signal }`).
   */
  signal: AbortSignal;
  /**
   * Stable across retries and resumes of the same call: derived from (run id, step, call index), never from the
   * model's call id. Hand it to downstream APIs that deduplicate (payments, tickets, mail).
   */
  idempotencyKey: string;
  runId: string;
  step: number;
  callIndex: number;
  /** 1 for the first execution of this call, higher when it is retried. */
  attempt: number;
  /**
   * Reports this call's progress as a `tool-call-progress` run event. Present only while somebody listens to the
   * run's events, so that a tool can skip asking its backend for progress when nobody would see it; reports after
   * the call has ended are ignored. Defaults to absent.
   */
  reportProgress?: (progress: ToolProgress) => void;
}

/** A tool the agent can call. Build one with `tool(...)`. */
export interface Tool<Input = unknown, Output = unknown> {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the input, sent to the model. */
  readonly inputSchema: JsonSchema;
  /** Validates (and may transform) the parsed arguments. */
  validate(input: unknown): ValidationResult<Input> | Promise<ValidationResult<Input>>;
  /** Whether running the tool twice with the same input is harmless. Defaults to false. */
  readonly idempotent: boolean;
  /** Longest a call may run. */
  readonly timeoutMs?: number;
  /** Whether a human must approve a call before it runs. */
  readonly needsApproval?: boolean | ApprovalCheck<Input>;
  execute(input: Input, context: ToolContext): Promise<Output> | Output;
  /** What answers instead when a call fails, tried in order. Defaults to none. */
  readonly fallbacks?: readonly ToolFallback<Input>[];
  /**
   * Finds out whether an earlier call whose outcome is unknown (it timed out, or its connection dropped, after it may
   * have taken effect) did take effect; what it found is shown to the model as the repeat's result, whatever its type.
   * Defaults to none: a repeat of such a call then waits for a person's decision.
   */
  reconcile?(input: Input, context: ReconcileContext): Promise<ReconcileResult> | ReconcileResult;
}

/** What a tool's `reconcile` is handed: the earlier call's idempotency key, and a signal bounded by the tool's timeout. */
export interface ReconcileContext {
  /** The idempotency key the earlier call was executed with (what a downstream service deduplicated on). */
  readonly idempotencyKey: string;
  /** Aborted on cancellation or when the tool's timeout elapses. */
  readonly signal: AbortSignal;
}

/**
 * What a tool's `reconcile` found: the effect happened (with the result the call would have returned), or it did not
 * (the call may run).
 */
export type ReconcileResult<Output = unknown> =
  | { readonly happened: true; readonly output: Output }
  | { readonly happened: false };

/**
 * A tool's lookup of an earlier call's effect (see `Tool.reconcile`). A throw (or a timeout) leaves the outcome
 * unknown.
 */
export type ToolReconcile<Input = unknown, Output = unknown> = (
  input: Input,
  context: ReconcileContext,
) => Promise<ReconcileResult<Output>> | ReconcileResult<Output>;

/**
 * Tools that may change while an agent lives, such as the tools of an MCP server (`mcpTools(...)` is one). Pass it
 * in `agent({ tools })` beside plain tools: the agent reads `version` before each model step (and before resuming a
 * run), and only when it moved since the last read does it call `tools()` and offer the model the new list. A tool
 * added by the source is offered at the next step; a removed one is no longer offered.
 */
export interface ToolSource {
  /**
   * Changes whenever the tools may have changed: a tool added, removed or redefined, or a new listing due (the source
   * must connect first, or its server said its list changed). Read before every model step, so it must be cheap.
   */
  readonly version: number;
  /** The tools as last listed, without waiting (empty before the first listing). */
  readonly current: readonly Tool[];
  /**
   * The tools brought up to date: connects and lists on first use, or waits for a new listing that is due. A
   * rejection before the source has ever listed fails the run (or `resume`); after that, the last list stays.
   */
  tools(): Promise<readonly Tool[]>;
}

/**
 * Which failures a {@link ToolFallback} answers: error codes and categories (`'tool.timeout'`, `'network'`), or a
 * predicate on the failure.
 */
export type ToolFallbackCondition = readonly (ErrorCode | ErrorCategory)[] | ((error: KeelError) => boolean);

/** What a value fallback is handed: the call's context and the failure it answers. */
export interface ToolFallbackContext extends ToolContext {
  readonly error: KeelError;
}

/**
 * What answers a failed tool call instead: another tool given the same arguments (a replica, a cache), or a function
 * returning a degraded value. The model is told the result is degraded, and the run's report counts it.
 */
export type ToolFallback<Input = unknown> = {
  /**
   * The failures this fallback answers (the latest failure of the chain is matched), as error codes and categories
   * (`['tool.unavailable', 'network']`) or a predicate. Defaults to every failure of the tool: a plain thrown
   * `Error` (`tool.failed`), a timeout, a 5xx, an open breaker, a permission refused. Control signals (the run's
   * cancellation or timeout, an interrupt, a tool's request to stop the run) never trigger a fallback. A fallback
   * tool after a tool that is not idempotent still runs only when the failure proves nothing ran (see `tool`).
   */
  readonly on?: ToolFallbackCondition;
  /** Told to the model in `degraded.reason`. Defaults to a sentence naming the failure answered. */
  readonly reason?: string;
} & (
  | {
      /**
       * Another tool, called with the call's arguments (validated by its own schema) and idempotency key, under its
       * own breaker, timeout and retries. Its own fallbacks are not used. For a tool that is not idempotent, it runs
       * only when the failure proves the tool never ran (an open breaker, `tool.unavailable`, a refused connection).
       */
      readonly tool: Tool;
      readonly value?: never;
      readonly name?: never;
    }
  | {
      /** Computes the degraded value (a cached answer, a default), under the failed tool's timeout. */
      readonly value: FallbackValue<Input>;
      /** Names the fallback in `degraded.to`, events and the report. Defaults to `fallback value`. */
      readonly name?: string;
      readonly tool?: never;
    }
);

/**
 * Computes a fallback's degraded value. Declared through a method signature so that its parameter is checked
 * bivariantly, as {@link ApprovalCheck} is.
 */
export type FallbackValue<Input> = {
  compute(input: Input, context: ToolFallbackContext): unknown;
}['compute'];

/** How a result is degraded: which tool failed, what answered instead, and why. */
export interface ToolDegradation {
  /** The tool whose call failed. */
  readonly from: string;
  /** The fallback that answered: a tool's name, or a value fallback's name. */
  readonly to: string;
  /** The code of the tool's own failure (a later fallback may have answered another fallback's failure). */
  readonly errorCode: ErrorCode;
  /** Why the result is degraded, for the model. */
  readonly reason: string;
}

/**
 * Decides whether a call needs a human's approval. Declared through a method signature so its parameter is checked
 * bivariantly: a `Tool<{ city: string }>` must still fit a `Tool[]` (a plain function type would make `Tool`
 * invariant in its input and reject every typed tool).
 */
export type ApprovalCheck<Input> = {
  check(input: Input): boolean | Promise<boolean>;
}['check'];

/**
 * A tool's result as the model sees it: data, never an exception. A success answered by a fallback says so in
 * `degraded`.
 */
export type ToolResult =
  | { status: 'success'; content: JsonValue; degraded?: ToolDegradation }
  | { status: 'error'; error: SerializedError; guidance?: string };

/** What a tool name must look like: what OpenAI and Anthropic both accept. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
