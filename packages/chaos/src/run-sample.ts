import type { RunSample } from './scorecard.js';
import type { RunEnding } from './subject.js';

/** The code of a run the framework called completed whose answer is not the whole answer of a fault-free run. */
export const INCOMPLETE_ANSWER = 'answer.incomplete';

/**
 * How a run's ending counts: completed only with the whole answer; an answer that lacks part of it fails with
 * `answer.incomplete` (the framework said it succeeded: a silent failure); an ending that does not say what happened
 * is untyped.
 */
export function sampleOf(
  runId: string,
  startedAtMs: number,
  endedAtMs: number,
  ending: RunEnding,
  complete: (answer: string | undefined) => boolean,
): RunSample {
  const times = { runId, startedAtMs, endedAtMs };
  if (ending.status === 'completed') {
    return complete(ending.output)
      ? { ...times, outcome: 'completed' }
      : { ...times, outcome: 'failed', code: INCOMPLETE_ANSWER };
  }
  const code = ending.code ?? `run.${ending.status}`;
  return { ...times, outcome: ending.typed ? 'failed' : 'untyped', code };
}

/** A run whose `run` threw instead of reporting how it ended. */
export function thrownSample(
  runId: string,
  startedAtMs: number,
  endedAtMs: number,
  thrown: unknown,
): RunSample {
  const name = thrown instanceof Error ? thrown.name : typeof thrown;
  return { runId, startedAtMs, endedAtMs, outcome: 'untyped', code: `untyped:${name}` };
}
