import { KeelError, type RunStore, type RunSummary } from '@keel/core';

/**
 * What the feed tells its listeners: it is watching (`ready`, also once the store answers again after an `error`),
 * runs moved, or the store failed.
 */
export type StoreChange =
  | { kind: 'ready' }
  | { kind: 'runs'; runIds: string[] }
  | { kind: 'error'; code: string; message: string };

/** Receives store changes. */
export type ChangeListener = (change: StoreChange) => void;

/**
 * Watches a run store for moving runs by polling its listing (the store interface has no notifications): a run
 * whose version or lease holder changed (a worker took it), or a new run, is reported. One feed serves every open page; it polls only while somebody
 * listens, and never overlaps two polls.
 */
export class ChangeFeed {
  private readonly listeners = new Set<ChangeListener>();
  private versions: Map<string, string> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private failing = false;
  private closed = false;

  constructor(
    private readonly store: RunStore,
    private readonly intervalMs: number,
    private readonly limit: number,
  ) {}

  /** Adds a listener (told `ready` once the feed has a baseline) and returns its removal. */
  subscribe(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    if (this.versions !== undefined) listener({ kind: 'ready' });
    if (!this.polling && this.timer === undefined) void this.poll();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  }

  /** Stops polling for good. */
  close(): void {
    this.closed = true;
    this.listeners.clear();
    this.stop();
  }

  private stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.versions = undefined;
  }

  private async poll(): Promise<void> {
    this.timer = undefined;
    this.polling = true;
    try {
      const runs = await this.store.listRuns({ limit: this.limit });
      const next = new Map(runs.map((run) => [run.runId, fingerprint(run)]));
      const previous = this.versions;
      this.versions = next;
      if (previous === undefined || this.failing) this.emit({ kind: 'ready' });
      this.failing = false;
      if (previous !== undefined) {
        const runIds = runs
          .filter((run) => previous.get(run.runId) !== fingerprint(run))
          .map((run) => run.runId);
        if (runIds.length > 0) this.emit({ kind: 'runs', runIds });
      }
    } catch (error) {
      this.failing = true;
      const keelError = KeelError.isInstance(error) ? error : undefined;
      this.emit({
        kind: 'error',
        code: keelError?.code ?? 'store.unavailable',
        message: keelError?.message ?? String(error),
      });
    } finally {
      this.polling = false;
      if (!this.closed && this.listeners.size > 0) {
        this.timer = setTimeout(() => void this.poll(), this.intervalMs);
        this.timer.unref();
      }
    }
  }

  private emit(change: StoreChange): void {
    for (const listener of this.listeners) listener(change);
  }
}

/** What tells a run moved: its version, and who holds it (a lease is taken and given back without a new version). */
function fingerprint(run: RunSummary): string {
  return `${run.version}\u0000${run.lease?.owner ?? ''}`;
}
