/** How often a chat says it still waits for a model. */
export interface ModelWaitCadence {
  /** The first notice, this long after the call started (ms). Defaults to 1_000. */
  firstAfterMs?: number;
  /** Then one every this many ms. Defaults to 1_000. */
  everyMs?: number;
}

/**
 * Tells while a model call has sent nothing back: `tick(model, waitedMs)` once the call has waited `firstAfterMs`,
 * then every `everyMs`, until `stop()` (its first text, its end, the run's end). Real time: this is what a person
 * watching waits; the timers never hold the process open.
 */
export class ModelWait {
  private timer: NodeJS.Timeout | undefined;
  private startedAtMs = 0;
  private model = '';

  constructor(
    private readonly tick: (model: string, waitedMs: number) => void,
    private readonly cadence: ModelWaitCadence = {},
  ) {}

  /** A call to `model` (`provider/model`) starts: the wait is counted from now. */
  start(model: string): void {
    this.stop();
    this.model = model;
    this.startedAtMs = Date.now();
    this.schedule(this.cadence.firstAfterMs ?? 1_000);
  }

  /** The call answered (or ended): no more notices. */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.tick(this.model, Date.now() - this.startedAtMs);
      this.schedule(this.cadence.everyMs ?? 1_000);
    }, delayMs);
    this.timer.unref();
  }
}
