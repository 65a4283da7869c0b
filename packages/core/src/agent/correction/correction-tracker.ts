import { createHash } from 'node:crypto';
import { KeelError } from '../../errors/keel-error.js';

/** Options of {@link CorrectionTracker}. */
export interface CorrectionLimits {
  /**
   * Attempts the model gets at one tool (or at the final output) in a row, the first included: after this many
   * invalid attempts without a valid one between them the run ends with `run.no_progress`. Defaults to 3.
   */
  maxAttemptsPerCall?: number;
  /** Invalid tool calls and outputs allowed in one run: reaching this many ends it with `run.no_progress`. Defaults to 10. */
  maxInvalidPerRun?: number;
}

/** What is being corrected: a tool call, or the run's structured final output. */
export type CorrectionKind = 'tool-call' | 'output';

/** One invalid attempt by the model. */
export interface CorrectionFailure {
  /** Defaults to `tool-call`. */
  kind?: CorrectionKind;
  /** The tool name the model used (known or not); for the final output, any fixed name such as `output`. */
  target: string;
  /** The raw text the model sent: the call's arguments, or the output text. */
  text: string;
  /** Why it was invalid (`tool.not_found`, `tool.invalid_input`, `output.invalid`). */
  error: KeelError;
}

/** Why the tracker ended the run. */
export type CorrectionStopReason = 'per_call_limit' | 'per_run_limit' | 'repeated_invalid_call';

/** What the loop should do after an invalid attempt. */
export type CorrectionDecision =
  | {
      action: 'correct';
      /** This attempt's number at this target, in a row (1 for the first invalid one). */
      attemptForCall: number;
      /** Invalid attempts so far in the run, this one included. */
      invalidInRun: number;
    }
  | { action: 'stop'; reason: CorrectionStopReason; error: KeelError };

/** A tracker's state, JSON-safe, for checkpoints. */
export interface CorrectionTrackerState {
  attemptsInARow: Record<string, number>;
  invalidInRun: number;
  /**
   * SHA-256 fingerprints of the invalid attempts since the last valid call (kind, target, text, error code and
   * message).
   */
  fingerprints: string[];
}

const DEFAULT_MAX_ATTEMPTS_PER_CALL = 3;
const DEFAULT_MAX_INVALID_PER_RUN = 10;

/**
 * Bounds the model's self-correction. Each invalid tool call or output is recorded; the tracker answers `correct`
 * (send the guidance, let the model try again) or `stop` with a `run.no_progress` error when the model made the same
 * invalid attempt twice with no valid call between them (same kind, target, text and error: it is not learning), or
 * exhausted its attempts at one target in a row, or in the run. A valid attempt resets the count for its target and
 * is progress: an invalid attempt seen before it no longer counts as a repeat. The state can be checkpointed
 * with `toJSON()` and restored through the constructor.
 *
 * @example
 *   const tracker = new CorrectionTracker({ maxAttemptsPerCall: 3, maxInvalidPerRun: 10 });
 *   const decision = tracker.recordFailure({ target: call.name, text: call.arguments, error });
 *   if (decision.action === 'stop') return fail(decision.error);
 */
export class CorrectionTracker {
  readonly maxAttemptsPerCall: number;
  readonly maxInvalidPerRun: number;
  private readonly attemptsInARow: Map<string, number>;
  private readonly fingerprints: Set<string>;
  private invalidInRun: number;

  constructor(limits: CorrectionLimits = {}, state?: CorrectionTrackerState) {
    this.maxAttemptsPerCall = positiveInteger(
      limits.maxAttemptsPerCall,
      DEFAULT_MAX_ATTEMPTS_PER_CALL,
      'maxAttemptsPerCall',
    );
    this.maxInvalidPerRun = positiveInteger(
      limits.maxInvalidPerRun,
      DEFAULT_MAX_INVALID_PER_RUN,
      'maxInvalidPerRun',
    );
    this.attemptsInARow = new Map(Object.entries(state?.attemptsInARow ?? {}));
    this.fingerprints = new Set(state?.fingerprints ?? []);
    this.invalidInRun = state?.invalidInRun ?? 0;
  }

  /** Invalid attempts recorded in the run so far. */
  get invalidCount(): number {
    return this.invalidInRun;
  }

  /** Records an invalid attempt and decides whether the model may try again. */
  recordFailure(failure: CorrectionFailure): CorrectionDecision {
    const kind = failure.kind ?? 'tool-call';
    const key = `${kind}:${failure.target}`;
    const attempt = (this.attemptsInARow.get(key) ?? 0) + 1;
    this.attemptsInARow.set(key, attempt);
    this.invalidInRun++;
    const fingerprint = createHash('sha256')
      .update([kind, failure.target, failure.text, failure.error.code, failure.error.message].join('\u0000'))
      .digest('hex');
    const repeated = this.fingerprints.has(fingerprint);
    this.fingerprints.add(fingerprint);
    const subject = kind === 'output' ? 'the final output' : `tool call "${failure.target}"`;
    const stop = (reason: CorrectionStopReason, message: string): CorrectionDecision => ({
      action: 'stop',
      reason,
      error: new KeelError('run.no_progress', message, {
        cause: failure.error,
        data: {
          reason,
          kind,
          target: failure.target,
          attemptsInARow: attempt,
          invalidInRun: this.invalidInRun,
          lastErrorCode: failure.error.code,
        },
      }),
    });
    if (repeated) {
      return stop(
        'repeated_invalid_call',
        `The model repeated the same invalid ${subject} after being told what was wrong (${failure.error.code}: ${failure.error.message})`,
      );
    }
    if (attempt >= this.maxAttemptsPerCall) {
      return stop(
        'per_call_limit',
        `The model made ${attempt} invalid attempts in a row at ${subject} (limit ${this.maxAttemptsPerCall}); last error ${failure.error.code}: ${failure.error.message}`,
      );
    }
    if (this.invalidInRun >= this.maxInvalidPerRun) {
      return stop(
        'per_run_limit',
        `The model made ${this.invalidInRun} invalid tool calls or outputs in this run (limit ${this.maxInvalidPerRun}); last error ${failure.error.code}: ${failure.error.message}`,
      );
    }
    return { action: 'correct', attemptForCall: attempt, invalidInRun: this.invalidInRun };
  }

  /**
   * Records a valid call of `target` (or a valid output): its count of attempts in a row starts again, and the run
   * made progress, so the invalid attempts before it are forgotten as repeats (a model that sends the same broken call
   * again after a valid one is not stuck; `maxInvalidPerRun` still bounds it).
   */
  recordSuccess(target: string, kind: CorrectionKind = 'tool-call'): void {
    this.attemptsInARow.delete(`${kind}:${target}`);
    this.fingerprints.clear();
  }

  /** The tracker's state, for a checkpoint. */
  toJSON(): CorrectionTrackerState {
    return {
      attemptsInARow: Object.fromEntries(this.attemptsInARow),
      invalidInRun: this.invalidInRun,
      fingerprints: [...this.fingerprints],
    };
  }
}

function positiveInteger(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) {
    throw new KeelError('config.invalid', `${name} must be a positive integer (got ${String(value)})`);
  }
  return value;
}
