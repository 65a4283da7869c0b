import { type BreakerMove, KeelError, type RunStatus, type RunStore, type RunSummary } from '@keel/core';
import { type RunRow, readStoredRun, runRow, type StoredRun, workerOf } from './run-view.js';

/** The statuses a run can have, for filters. */
export const RUN_STATUSES: readonly RunStatus[] = [
  'queued',
  'running',
  'interrupted',
  'completed',
  'failed',
  'cancelled',
];

/** What the list is narrowed to. */
export interface RunFilter {
  status?: RunStatus;
  agentName?: string;
  /** Text to find in the run id, agent name, task, worker, stop reason or error code (case-insensitive). */
  query?: string;
}

/** A breaker's last move seen by any listed run. */
export interface BreakerRow {
  target: BreakerMove['target'];
  name: string;
  state: BreakerMove['to'];
  atMs: number;
  runId: string;
}

interface Cached {
  version: number;
  row: RunRow;
  /** When the run started: a running run's age. */
  startedAtMs: number | undefined;
  /** When a run no worker has started yet was submitted: a queued run's wait. */
  submittedAtMs: number | undefined;
  breakerMoves: readonly BreakerMove[];
}

const LOAD_CONCURRENCY = 16;

/**
 * The runs of a store as list rows. The store lists summaries only, so each row's figures come from loading the
 * run's state; a state is loaded again only when the run's version moved. Who holds a run (its lease, which moves
 * without a new version) comes from the listing itself.
 */
export class RunCatalog {
  private readonly cache = new Map<string, Cached>();

  constructor(
    private readonly store: RunStore,
    private readonly limit: number,
    private readonly now: () => number,
  ) {}

  /** The newest runs (newest first), narrowed by `filter`, and the breakers they saw. */
  async list(filter: RunFilter = {}): Promise<{ runs: RunRow[]; agents: string[]; breakers: BreakerRow[] }> {
    const summaries = await this.store.listRuns(
      filter.status === undefined ? { limit: this.limit } : { status: filter.status, limit: this.limit },
    );
    const cached = await this.load(summaries, filter.status === undefined);
    const nowMs = this.now();
    const agents = [...new Set(cached.map((entry) => entry.row.agentName))].sort();
    const query = filter.query?.trim().toLowerCase() ?? '';
    const runs = cached
      .map((entry, index) => live(entry, summaries[index]!, nowMs))
      .filter((row) => filter.agentName === undefined || row.agentName === filter.agentName)
      .filter((row) => query === '' || searchText(row).includes(query));
    return { runs, agents, breakers: lastMoves(cached) };
  }

  /** Rows of `summaries`, from the cache where their version has not moved; `complete`: the listing is unfiltered. */
  private async load(summaries: readonly RunSummary[], complete: boolean): Promise<Cached[]> {
    const result: Cached[] = new Array(summaries.length);
    const stale: number[] = [];
    summaries.forEach((summary, index) => {
      const hit = this.cache.get(summary.runId);
      if (hit !== undefined && hit.version === summary.version) result[index] = hit;
      else stale.push(index);
    });
    for (let offset = 0; offset < stale.length; offset += LOAD_CONCURRENCY) {
      await Promise.all(
        stale.slice(offset, offset + LOAD_CONCURRENCY).map(async (index) => {
          const summary = summaries[index]!;
          const record = await this.store.loadRun(summary.runId);
          const source = record ?? summary;
          const stored: StoredRun =
            record === undefined
              ? {
                  kind: 'unreadable',
                  error: new KeelError(
                    'store.not_found',
                    `Run ${summary.runId} is listed but could not be loaded`,
                  ),
                }
              : readStoredRun(record);
          const entry: Cached = {
            version: source.version,
            row: runRow(source, stored, this.now()),
            startedAtMs: stored.kind === 'started' ? stored.state.startedAtMs : undefined,
            submittedAtMs: stored.kind === 'queued' ? stored.queued.submittedAtMs : undefined,
            breakerMoves: stored.kind === 'started' ? stored.state.report.breakerTransitions : [],
          };
          this.cache.set(summary.runId, entry);
          result[index] = entry;
        }),
      );
    }
    // Runs that fell off the newest `limit` leave the cache; a listing narrowed by status says nothing of the others.
    if (complete) {
      const listed = new Set(summaries.map((summary) => summary.runId));
      for (const runId of this.cache.keys()) if (!listed.has(runId)) this.cache.delete(runId);
    }
    return result;
  }
}

/** A cached row brought up to `nowMs` and to the listing: the age of running and queued runs, and who holds them. */
function live(entry: Cached, summary: RunSummary, nowMs: number): RunRow {
  const row: RunRow = { ...entry.row };
  delete row.worker;
  const worker = workerOf(summary, nowMs);
  if (worker !== undefined) row.worker = worker;
  if (row.status === 'running' && entry.startedAtMs !== undefined)
    row.durationMs = Math.max(0, nowMs - entry.startedAtMs);
  if (row.status === 'queued' && entry.submittedAtMs !== undefined)
    row.queuedMs = Math.max(0, nowMs - entry.submittedAtMs);
  return row;
}

function searchText(row: RunRow): string {
  return [
    row.runId,
    row.agentName,
    row.status,
    row.task ?? '',
    row.worker?.owner ?? '',
    row.stopReason ?? '',
    row.errorCode ?? '',
  ]
    .join(' ')
    .toLowerCase();
}

function lastMoves(entries: readonly Cached[]): BreakerRow[] {
  const latest = new Map<string, BreakerRow>();
  for (const entry of entries) {
    for (const move of entry.breakerMoves) {
      const key = `${move.target}\u0000${move.name}`;
      const known = latest.get(key);
      if (known === undefined || known.atMs < move.atMs) {
        latest.set(key, {
          target: move.target,
          name: move.name,
          state: move.to,
          atMs: move.atMs,
          runId: entry.row.runId,
        });
      }
    }
  }
  return [...latest.values()].sort((left, right) => right.atMs - left.atMs);
}
