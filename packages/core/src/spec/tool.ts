import type { JsonValue } from '../errors/keel-error.js';
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
  /** Aborted on cancellation or when the tool's timeout elapses. A tool should stop at once. */
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
}

/**
 * Decides whether a call needs a human's approval. Declared through a method signature so its parameter is checked
 * bivariantly: a `Tool<{ city: string }>` must still fit a `Tool[]` (a plain function type would make `Tool`
 * invariant in its input and reject every typed tool).
 */
export type ApprovalCheck<Input> = {
  check(input: Input): boolean | Promise<boolean>;
}['check'];

/** A tool's result as the model sees it: data, never an exception. */
export type ToolResult =
  | { status: 'success'; content: JsonValue }
  | { status: 'error'; error: SerializedError; guidance?: string };
