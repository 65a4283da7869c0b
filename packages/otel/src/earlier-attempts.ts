import type { SpanContext } from '@opentelemetry/api';

/** Most span contexts kept per run: a run resumed more often links to its latest attempts. */
const MAX_ATTEMPTS_PER_RUN = 8;

/**
 * The spans of interrupted runs' attempts, kept in memory (at most `maxRuns` runs, the oldest dropped first) so that
 * a resumption in this process links to them.
 */
export class EarlierAttempts {
  private readonly byRun = new Map<string, SpanContext[]>();

  constructor(private readonly maxRuns: number) {}

  /** The span contexts of the run's earlier attempts, oldest first. */
  of(runId: string): readonly SpanContext[] {
    return this.byRun.get(runId) ?? [];
  }

  /** Adds an attempt's span context. */
  remember(runId: string, spanContext: SpanContext): void {
    const attempts = [...this.of(runId), spanContext].slice(-MAX_ATTEMPTS_PER_RUN);
    this.byRun.delete(runId);
    this.byRun.set(runId, attempts);
    if (this.byRun.size > this.maxRuns) this.byRun.delete(this.byRun.keys().next().value!);
  }

  /** Drops a run that ended for good. */
  forget(runId: string): void {
    this.byRun.delete(runId);
  }
}
