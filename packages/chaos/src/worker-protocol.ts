import type { JsonValue } from '@keel/core';
import type { EnvironmentSpec } from './environment.js';
import type { RunEnding } from './subject.js';

/** What a worker process is told to do (its one argument, as JSON). */
export interface WorkerSpec {
  /** The module whose `createChaosSubject(options)` makes the subject. */
  readonly module: string;
  readonly options: JsonValue;
  readonly environment: EnvironmentSpec;
  readonly task: string;
  /** `run`: start the runs; `recover`: go on with runs a killed worker left (resume, or start again). */
  readonly mode: 'run' | 'recover';
  /**
   * Whether the worker waits, once ready, for a line on its stdin (the go of a fleet whose processes start together)
   * before it starts its runs. Defaults to false.
   */
  readonly waitForGo?: boolean;
  /** The runs, each started `delayMs` after the worker is ready (after the go, with `waitForGo`). */
  readonly runs: readonly { readonly runId: string; readonly delayMs: number }[];
}

/** One JSON line a worker prints on stdout. */
export type WorkerLine =
  | { readonly type: 'ready'; readonly atMs: number }
  | { readonly type: 'start'; readonly runId: string; readonly atMs: number }
  | { readonly type: 'effect'; readonly runId: string; readonly tool: string }
  | {
      readonly type: 'end';
      readonly runId: string;
      readonly atMs: number;
      readonly ending?: RunEnding;
      /** Set instead of `ending` when the subject threw: the thrown value's name. */
      readonly thrown?: string;
    }
  | { readonly type: 'error'; readonly message: string };
