import { KeelError } from '@keel/core';
import type { ResumeOutcome } from './resume.js';

/** What the page is told about resumes started from this dashboard. */
export interface ResumeStatus {
  /** A resume started here is still running. */
  active: boolean;
  /** How the last resume started here ended: the run's status, or the error that stopped it. */
  last?: {
    atMs: number;
    outcome?: ResumeOutcome;
    error?: { code: string; message: string; guidance?: string };
  };
}

/** Keeps the resumes this dashboard started: one at a time per run, and how the last one ended. */
export class ResumeTracker {
  private readonly active = new Map<string, Promise<void>>();
  private readonly last = new Map<string, NonNullable<ResumeStatus['last']>>();

  constructor(private readonly now: () => number) {}

  /** Whether a resume of `runId` started here is still running. */
  isActive(runId: string): boolean {
    return this.active.has(runId);
  }

  /** Reserves `runId` while `start` sets a resume going, then follows it until it finishes. */
  async start(runId: string, start: () => Promise<{ finished: Promise<ResumeOutcome> }>): Promise<void> {
    if (this.active.has(runId)) {
      throw new KeelError('store.conflict', `Run ${runId} is already being resumed from this dashboard`, {
        data: { runId },
      });
    }
    let release!: () => void;
    this.active.set(
      runId,
      new Promise<void>((resolve) => {
        release = resolve;
      }),
    );
    const settle = (last: NonNullable<ResumeStatus['last']>) => {
      this.last.set(runId, last);
      this.active.delete(runId);
      release();
    };
    let finished: Promise<ResumeOutcome>;
    try {
      ({ finished } = await start());
    } catch (error) {
      this.active.delete(runId);
      release();
      throw error;
    }
    finished.then(
      (outcome) => settle({ atMs: this.now(), outcome }),
      (error: unknown) => settle({ atMs: this.now(), error: describe(error) }),
    );
  }

  /** What the page shows about resumes of `runId` started here. */
  status(runId: string): ResumeStatus {
    const last = this.last.get(runId);
    return last === undefined ? { active: this.isActive(runId) } : { active: this.isActive(runId), last };
  }

  /** Resolves once every resume under way has finished. */
  async settled(): Promise<void> {
    await Promise.all(this.active.values());
  }

  /** Resumes started here still running. */
  get count(): number {
    return this.active.size;
  }
}

function describe(error: unknown): { code: string; message: string; guidance?: string } {
  if (KeelError.isInstance(error)) {
    return error.guidance === undefined
      ? { code: error.code, message: error.message }
      : { code: error.code, message: error.message, guidance: error.guidance };
  }
  return { code: 'internal.unexpected', message: error instanceof Error ? error.message : String(error) };
}
