import { answerCheck } from './answer-check.js';
import { sampleOf } from './run-sample.js';
import type { RunSample } from './scorecard.js';
import type { BreakerMoveRecord } from './subject.js';
import type { WorkerLine } from './worker-protocol.js';

/** What the worker processes of a crash or fleet scenario said of each run: when it started and how it ended. */
export interface WorkerRunLines {
  readonly started: ReadonlyMap<string, number>;
  readonly ended: ReadonlyMap<string, Extract<WorkerLine, { type: 'end' }>>;
}

/**
 * The scorecard's sample of every run of `runIds` from the worker processes' lines, and the breaker moves they
 * reported. A run no process ended is hung (at `capMs` after its start, or after `unstartedAtMs` when no process said
 * it started); a run that ended without a typed ending is untyped; the others are judged against `answer`.
 */
export function workerRunSamples(
  runIds: readonly string[],
  lines: WorkerRunLines,
  options: { readonly unstartedAtMs: number; readonly capMs: number; readonly answer: string },
): { runs: RunSample[]; moves: BreakerMoveRecord[] } {
  const complete = answerCheck(options.answer);
  const moves: BreakerMoveRecord[] = [];
  const runs = runIds.map((runId): RunSample => {
    const begun = lines.started.get(runId) ?? options.unstartedAtMs;
    const end = lines.ended.get(runId);
    if (end === undefined)
      return { runId, startedAtMs: begun, endedAtMs: begun + options.capMs, outcome: 'hung', code: 'hung' };
    if (end.ending === undefined) {
      return {
        runId,
        startedAtMs: begun,
        endedAtMs: end.atMs,
        outcome: 'untyped',
        code: `untyped:${end.thrown}`,
      };
    }
    moves.push(...(end.ending.breakerMoves ?? []));
    return sampleOf(runId, begun, end.atMs, end.ending, complete);
  });
  return { runs, moves };
}
