import type { Message } from '../../spec/model.js';
import type { RunStore } from '../../spec/run-store.js';
import type { RunOptions, RunResult } from '../loop/run.js';
import type { ApprovalAnswer, ToolCallDecision } from '../run/pending-decision.js';

/**
 * What composing needs of an agent: any `Agent` made by `agent()` is one. Give the child the parent's `store` to make
 * its runs durable: a child with no store runs as a plain (not idempotent) tool call.
 */
export interface ChildAgent<Output = unknown> {
  readonly name: string;
  readonly store?: RunStore;
  run(input: string | readonly Message[], options?: RunOptions): Promise<RunResult<Output>>;
  resume(
    runId: string,
    options?: {
      approvals?: Record<string, ApprovalAnswer>;
      decisions?: Record<string, ToolCallDecision>;
      signal?: AbortSignal;
    },
  ): Promise<RunResult<Output>>;
}
