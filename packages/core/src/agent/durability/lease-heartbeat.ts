import { KeelError } from '../../errors/keel-error.js';
import type { Clock, TimerHandle } from '../../policies/clock.js';
import type { DurabilitySettings } from '../run/durability.js';
import { withStoreTimeout } from './store-calls.js';

/**
 * Keeps a durable run's lease alive while no checkpoint renews it (a long model or tool call runs): every third of
 * the lease's TTL on the clock (an unref'd timer), it renews the lease if nothing else did meanwhile. Another process
 * holding the lease now (`store.conflict`) is reported through `onLost`; an outage is left to the next checkpoint.
 */
export class LeaseHeartbeat {
  private renewedAtMs: number;
  private timer: TimerHandle | undefined;
  private stopped = false;
  /** The renewal in flight, which `stop` waits for, so that it cannot land after the lease was released. */
  private beating: Promise<void> | undefined;

  constructor(
    private readonly settings: DurabilitySettings,
    private readonly runId: string,
    private readonly clock: Clock,
    takenAtMs: number,
    private readonly onLost: (error: KeelError) => void,
  ) {
    this.renewedAtMs = takenAtMs;
  }

  /** Starts beating. */
  start(): void {
    this.schedule();
  }

  /** Whether the lease is due for renewal: a third of its TTL went by since it was last renewed. */
  due(): boolean {
    return this.clock.now() - this.renewedAtMs >= this.everyMs;
  }

  /** The lease was renewed at `nowMs` (by a checkpoint or a beat). */
  renewed(nowMs: number): void {
    this.renewedAtMs = Math.max(this.renewedAtMs, nowMs);
  }

  /** Stops for good; resolves once a renewal in flight has settled. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    await this.beating;
  }

  private get everyMs(): number {
    return Math.max(1, Math.floor(this.settings.leaseTtlMs / 3));
  }

  private schedule(): void {
    if (this.stopped) return;
    const handle = this.clock.setTimeout(() => this.beat(), this.everyMs);
    (handle as { unref?: () => void } | undefined)?.unref?.();
    this.timer = handle;
  }

  private beat(): void {
    this.timer = undefined;
    if (this.stopped) return;
    if (!this.due()) {
      this.schedule();
      return;
    }
    const { store, owner, leaseTtlMs, storeTimeoutMs } = this.settings;
    const nowMs = this.clock.now();
    const renewal = withStoreTimeout(
      () => store.acquireLease(this.runId, owner, leaseTtlMs, nowMs),
      storeTimeoutMs,
      this.clock,
    );
    this.beating = renewal.then(
      () => {
        this.renewed(nowMs);
        this.schedule();
      },
      (error: unknown) => {
        if (this.stopped) return;
        if (KeelError.isInstance(error) && error.code === 'store.conflict') this.onLost(error);
        else this.schedule();
      },
    );
  }
}
