import { type EffectRecord, effectsThatHappened } from './effect-ledger.js';
import type { RunSample } from './scorecard.js';
import type { RunEnding } from './subject.js';

/**
 * The code of a run the framework called completed without the whole answer of a fault-free run: part of the answer
 * is missing or cut, or a tool the answer quotes never ran to its end (its error was read as a result).
 */
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

/**
 * `samples` with every completed run that lacks a call of one of `tools` (those a fault-free run calls) whose effect
 * happened (it completed, or the tool's `reconcile` found its effect after a kill) turned into an `answer.incomplete`
 * failure: an answer can only be whole if the tools behind it ran.
 */
export function requireTools(
  samples: readonly RunSample[],
  effects: readonly EffectRecord[],
  tools: readonly string[],
): RunSample[] {
  const ran = new Set(effectsThatHappened(effects).map((effect) => `${effect.runId}\u0000${effect.tool}`));
  return samples.map((sample) =>
    sample.outcome === 'completed' && tools.some((tool) => !ran.has(`${sample.runId}\u0000${tool}`))
      ? { ...sample, outcome: 'failed', code: INCOMPLETE_ANSWER }
      : sample,
  );
}
