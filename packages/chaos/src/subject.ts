import type { JsonValue, Tool } from '@keel/core';

/** A model of the scenario's simulated server, as a subject should address it. */
export interface ChaosModel {
  /** The model name to send (`sim-primary`, `sim-fallback`, `sim-fallback-2`, ...). */
  readonly name: string;
  /** The model's context window in tokens, when the scenario sets one; a subject that can use it should declare it. */
  readonly contextWindowTokens?: number;
}

/** What a subject is given to run one scenario. */
export interface ChaosEnvironment {
  /** The scenario's name (`calibration` for the fault-free run the minimum is measured on). */
  readonly scenario: string;
  /** The simulated server's OpenAI-compatible base URL, ending in `/v1`. */
  readonly baseUrl: string;
  /** The models, primary first, then the fallbacks (none when the scenario offers none). */
  readonly models: readonly ChaosModel[];
  /** Whether the subject runs streamed (see `ChaosScenario.stream`). Defaults to false. */
  readonly stream?: boolean;
  /**
   * Set in a nested scenario (see `ChaosScenario.child`): the subject runs as a parent agent on `models` whose one
   * tool is a child agent on these models (its primary first, then its fallbacks); the child has the instrumented
   * tools. The tool's name and description are {@link CHILD_TOOL}'s, so that every subject's parent meets the same
   * tool. Defaults to none: one agent.
   */
  readonly child?: {
    readonly models: readonly ChaosModel[];
    /** Whether the parent hands the conversation over to the child instead (see `ChaosScenario.handoff`). */
    readonly handoff: boolean;
  };
  /** A scratch directory of this scenario's own (stores, outboxes), removed afterwards. */
  readonly directory: string;
  /**
   * Wraps the subject's tools with the scenario's tool faults and records each completed call in the effect ledger.
   * Every subject must pass its tools through it (and hand each call a `ToolContext` with the run's id).
   */
  instrumentTools(tools: readonly Tool[]): Tool[];
}

/**
 * The child agent's tool in nested scenarios (or its handoff), as every subject's parent offers it: its name, and a
 * description whose words make the simulated model hand it the task (`{ prompt }` for keel's `agentTool`, `{ input }`
 * for the OpenAI Agents SDK's `asTool`: the model passes the task itself either way).
 */
export const CHILD_TOOL = Object.freeze({
  name: 'travel_desk',
  description: 'A travel desk agent: looks up the weather and opens tickets; give it the whole request',
});

/** How one run ended, as a subject reports it. */
export interface RunEnding {
  /** The run's terminal status, as the framework reports it (`completed` when it returned an answer). */
  readonly status: 'completed' | 'failed' | 'interrupted' | 'cancelled';
  /** The final answer, when there is one. */
  readonly output?: string;
  /** What went wrong: a KeelError code, or a peer's typed error name (`AI_APICallError:503`). */
  readonly code?: string;
  /** What went wrong, in words. */
  readonly message?: string;
  /**
   * Whether the ending says what happened: a terminal status with a code when it failed, or a typed error of the
   * framework's own. False for a bare `Error`, a `TypeError`, or a thrown non-error.
   */
  readonly typed: boolean;
  /** Moves of the subject's breakers, for the probe goal. Defaults to none (a subject without breakers). */
  readonly breakerMoves?: readonly BreakerMoveRecord[];
}

/** One move of a breaker guarding a model. */
export interface BreakerMoveRecord {
  /** When it moved, in milliseconds since the epoch. */
  readonly atMs: number;
  /** The model it guards (the name the server sees). */
  readonly model: string;
  readonly to: 'open' | 'half-open' | 'closed';
}

/** A subject, ready for one scenario. */
export interface PreparedSubject {
  /** Runs `task` to its end. Should not throw; a throw counts as an untyped ending. */
  run(request: { runId: string; task: string; signal: AbortSignal }): Promise<RunEnding>;
  /**
   * Goes on with a run a killed worker left unfinished, from its last checkpoint. Only durable subjects have it; the
   * others start the run again.
   */
  resume?(request: { runId: string; signal: AbortSignal }): Promise<RunEnding>;
  /** Releases what `prepare` took (stores, servers, sockets). */
  close(): Promise<void>;
}

/** What the chaos suite measures: an agent framework set up in one way. */
export interface ChaosSubject {
  /** Names the subject in the scorecard, such as `keel (weather)` or `ai-sdk`. */
  readonly name: string;
  /** How many fallback models the subject uses when the scenario offers them (0: it has no fallback). */
  readonly fallbacks: number;
  /**
   * How to make the same subject in a worker process, for the crash scenario and the scenarios that run in worker
   * processes (`quota`): a module (its file URL or absolute path) whose `createChaosSubject(options)` export returns
   * it. Without it, those scenarios are skipped.
   */
  readonly worker?: { readonly module: string; readonly options: JsonValue };
  /**
   * The only scenarios (by name) this subject runs; the others leave it out of their scorecards, as if it were not
   * given. Defaults to every scenario. For a subject that exists to be compared in one scenario (a fleet with a
   * shared state, in `quota`).
   */
  readonly scenarios?: readonly string[];
  /**
   * Whether the subject can run nested scenarios (a parent agent calling a child agent as a tool, see
   * `ChaosEnvironment.child`). Defaults to false: those scenarios are skipped for it.
   */
  readonly nests?: boolean;
  /**
   * Whether the subject can run nested scenarios with a handoff (`ChaosScenario.handoff`: the parent hands the
   * conversation over to the child). Defaults to false: those scenarios are skipped for it.
   */
  readonly handsOff?: boolean;
  /** Sets the subject up against one scenario's server. */
  prepare(environment: ChaosEnvironment): Promise<PreparedSubject>;
}

/** The export a worker module must have: see {@link ChaosSubject.worker}. */
export type CreateChaosSubject = (options: JsonValue) => ChaosSubject | Promise<ChaosSubject>;
