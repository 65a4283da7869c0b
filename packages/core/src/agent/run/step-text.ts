import type { ErrorCode } from '../../errors/codes.js';

/** How a broken stream was recovered: see {@link StepText}. */
export type StreamRecoveryMode = 'continued' | 'restarted';

/** What {@link StepText} reports when a new attempt's answer has shown how it relates to the text delivered. */
export interface StreamRecovery {
  mode: StreamRecoveryMode;
  /** Characters of the step's delivered text the caller keeps: all of them (`continued`) or none (`restarted`). */
  keptCharacters: number;
  /** Why the stream was retried: the error of the attempt that broke. */
  errorCode: ErrorCode;
}

/**
 * The text of one model step as the caller received it, across the attempts of the step, so that a stream broken
 * after part of the answer was delivered can be retried without sending text twice.
 *
 * Once an attempt broke with text delivered, the next attempt's text is held while it repeats what was delivered.
 * When it goes beyond it, the step `continued`: only the new part is delivered. When it departs from it (or ends
 * short of it), the step `restarted`: the delivered text is void and the new answer is delivered from its start.
 * Either way the caller's text, restarts applied, equals the step's final answer.
 */
export class StepText {
  /** The step's text the caller holds (after restarts). */
  delivered = '';
  /** Set while an attempt follows a broken one: the error, and the new attempt's text so far. */
  private pending: { errorCode: ErrorCode; text: string } | undefined;
  private brokenBy: ErrorCode | undefined;

  /** A new step: nothing delivered. */
  reset(): void {
    this.delivered = '';
    this.pending = undefined;
    this.brokenBy = undefined;
  }

  /** An attempt starts: after a broken one that had delivered text, its answer is held until it shows its relation. */
  beginAttempt(): void {
    this.pending =
      this.delivered === '' || this.brokenBy === undefined
        ? undefined
        : { errorCode: this.brokenBy, text: '' };
  }

  /** The attempt failed with `errorCode`. */
  attemptFailed(errorCode: ErrorCode): void {
    this.brokenBy = errorCode;
  }

  /**
   * A delta of the current attempt: what to deliver to the caller (perhaps nothing), and the recovery it settled.
   * `restart` means the caller's text so far is void and `deliver` starts the step's text again.
   */
  accept(delta: string): { deliver: string; recovery?: StreamRecovery } {
    const pending = this.pending;
    if (pending === undefined) {
      this.delivered += delta;
      return { deliver: delta };
    }
    pending.text += delta;
    if (this.delivered.startsWith(pending.text)) return { deliver: '' };
    return this.settle(pending);
  }

  /**
   * The attempt answered: when its text never went beyond the delivered text, the recovery is settled now (the
   * same text: `continued`; less or other text: `restarted`, and what to deliver).
   */
  finishAttempt(): { deliver: string; recovery?: StreamRecovery } {
    const pending = this.pending;
    if (pending === undefined) return { deliver: '' };
    return this.settle(pending);
  }

  private settle(pending: { errorCode: ErrorCode; text: string }): {
    deliver: string;
    recovery: StreamRecovery;
  } {
    this.pending = undefined;
    this.brokenBy = undefined;
    const kept = this.delivered;
    if (pending.text.startsWith(kept)) {
      this.delivered = pending.text;
      return {
        deliver: pending.text.slice(kept.length),
        recovery: { mode: 'continued', keptCharacters: kept.length, errorCode: pending.errorCode },
      };
    }
    this.delivered = pending.text;
    return {
      deliver: pending.text,
      recovery: { mode: 'restarted', keptCharacters: 0, errorCode: pending.errorCode },
    };
  }
}
