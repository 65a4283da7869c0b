import type { PolicyContext } from '../../policies/policy.js';
import type { ToolContext, ToolProgress } from '../../spec/tool.js';
import { PARENT_RUN, type ParentRunHandle } from '../run/child-runs.js';
import type { RunContext } from '../run/run-context.js';
import { parentHandleOf } from './parent-handle.js';

/**
 * What a tool call is handed. Its signal is the call's own (aborted at the tool's timeout or the run's cancellation),
 * made only when the tool reads it, through an accessor on the prototype: an object literal with a getter would be
 * a slow dictionary-mode object whose accessor, kept in the old generation, holds each call's objects through the
 * next scavenges (a quarter of all the loop allocated was promoted, and collected only by full collections).
 */
export class ToolCallContext implements ToolContext {
  // Set only while somebody listens to the run's events (see ToolContext): no field otherwise.
  declare reportProgress?: (progress: ToolProgress) => void;
  // A private field: copying the context (`{ ...context }`) copies only what a ToolContext holds.
  readonly #call: PolicyContext;
  readonly #run: RunContext | undefined;

  constructor(
    call: PolicyContext,
    readonly idempotencyKey: string,
    readonly runId: string,
    readonly step: number,
    readonly callIndex: number,
    readonly attempt: number,
    run?: RunContext,
  ) {
    this.#call = call;
    this.#run = run;
  }

  get signal(): AbortSignal {
    return this.#call.signal;
  }

  /** The run making the call, for an agent tool or a handoff to start a child run of it (see `parentRunOf`). */
  get [PARENT_RUN](): ParentRunHandle | undefined {
    return this.#run === undefined ? undefined : parentHandleOf(this.#run, this.idempotencyKey);
  }
}

// A field added to ToolContext must be carried by ToolCallContext too: this does not compile until it is.
const toolCallContextCarriesEveryField: Record<Exclude<keyof ToolContext, keyof ToolCallContext>, never> = {};
void toolCallContextCarriesEveryField;
