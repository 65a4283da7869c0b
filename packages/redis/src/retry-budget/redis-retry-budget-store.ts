import type { Clock } from '@keel/core';
import {
  memoryRetryBudgetStore,
  RETRY_BUDGET_SLOTS,
  type RetryBudgetCounts,
  type RetryBudgetDenial,
  type RetryBudgetLimits,
  type RetryBudgetStore,
  type RetryBudgetStoreFactory,
  type RetryBudgetStoreOptions,
} from '@keel/core/store';
import type { Participant, SharedConnection, UnavailableRule } from '../shared-connection.js';
import { checkOptionsObject, requireChoice, requireName } from '../validation.js';
import { type BudgetAnswer, BudgetCounts, type BudgetOperation } from './budget-counts.js';

/** Options of `RedisState.retryBudgetStore`. */
export interface RedisRetryBudgetStoreOptions {
  /** Names the shared budget: every budget of this name, in any process, draws from it. Required. */
  name: string;
  /** What the budget does while Redis cannot be reached (see `RedisStateOptions.onUnavailable`). Defaults to the state's. */
  onUnavailable?: UnavailableRule;
}

const FACTORY = 'retryBudgetStore';
// Tolerates float error in `ratio × requests`, as core's budget does.
const EPSILON = 1e-9;

/** Makes retry budget stores over `connection`; see `RedisState.retryBudgetStore`. */
export function redisRetryBudgetStore(
  connection: SharedConnection,
  options: RedisRetryBudgetStoreOptions,
): RetryBudgetStoreFactory {
  checkOptionsObject(options, ['name', 'onUnavailable'], FACTORY, "{ name: 'models' }");
  const name = requireName(options.name, 'name', FACTORY);
  const rule = requireChoice(
    options.onUnavailable ?? connection.defaultRule,
    ['local', 'closed'],
    'onUnavailable',
    FACTORY,
  );
  return (storeOptions) =>
    new RedisRetryBudgetStore(connection, connection.key('retry-budget', name), rule, storeOptions);
}

/**
 * A retry budget whose counts live in Redis. `RetryBudget` answers synchronously, so each process judges a retry on
 * its copy of the shared counts (as of Redis's last answer, plus its own operations still on their way) and sends
 * what it did to Redis without waiting (one script call per request and per retry). Consistency: the copy is brought
 * back to the fleet's counts by every answer to this process's own operations, so a decision may miss what other
 * processes did since this one's last answer: processes retrying within the same round trip, or one retrying after a
 * quiet spell, may together exceed the limits by those few retries; the counts themselves are never lost.
 */
class RedisRetryBudgetStore implements RetryBudgetStore, Participant {
  private readonly limits: RetryBudgetLimits;
  private readonly clock: Clock;
  private readonly sharedCounts: BudgetCounts;
  private readonly windowed: boolean;
  /**
   * Operations sent and not answered yet, oldest first, with the time each was made (the scripts' clock) and their
   * place in the order of everything sent on the connection (answers come back in that order).
   */
  private pending: Array<{ operation: BudgetOperation; atMs: number; sequence: number }> = [];
  private sent = 0;
  /** The place of the newest answer taken into the copy: answers handled out of order must not undo a newer one. */
  private takenSequence = -1;
  private offsetMs = 0;
  private initialSpent: number;
  /** The store that stands in while Redis is unavailable (rule `local`), from the shared counts as they were. */
  private local: RetryBudgetStore | undefined;

  constructor(
    private readonly connection: SharedConnection,
    private readonly key: string,
    private readonly rule: UnavailableRule,
    private readonly options: RetryBudgetStoreOptions,
  ) {
    this.limits = options.limits;
    this.clock = options.clock;
    this.windowed = options.limits.ratio !== false;
    this.initialSpent = options.initialSpent;
    this.sharedCounts = new BudgetCounts(
      options.initialSpent,
      options.limits.windowMs / RETRY_BUDGET_SLOTS,
      this.windowed,
    );
    connection.join(this);
  }

  recordRequest(): void {
    if (!this.windowed) return;
    if (this.connection.available) this.send('request');
    else this.standIn()?.recordRequest();
  }

  tryAcquireRetry(): 'granted' | RetryBudgetDenial {
    if (!this.connection.available) return this.standIn()?.tryAcquireRetry() ?? 'unavailable';
    const { maxRetries, ratio, reserve } = this.limits;
    if (this.sharedCounts.spent >= maxRetries) return 'max_retries';
    if (ratio !== false) {
      const window = this.sharedCounts.window(this.serverNow());
      if (window.retries + 1 > ratio * window.requests + reserve + EPSILON) return 'ratio';
    }
    this.send('acquire');
    return 'granted';
  }

  releaseRetry(): void {
    if (this.connection.available) this.send('release');
    else this.standIn()?.releaseRetry();
  }

  counts(): RetryBudgetCounts {
    if (this.local !== undefined) return this.local.counts();
    if (!this.windowed) return { spent: this.sharedCounts.spent, requestsInWindow: 0, retriesInWindow: 0 };
    const window = this.sharedCounts.window(this.serverNow());
    return {
      spent: this.sharedCounts.spent,
      requestsInWindow: window.requests,
      retriesInWindow: window.retries,
    };
  }

  async prepareResync(): Promise<() => void> {
    const sequence = this.sent++;
    const answer = await this.call('sync');
    return () => {
      // The fleet's counts win over what this process counted alone; operations sent after the read still count.
      this.local = undefined;
      this.initialSpent = 0;
      this.take(answer, sequence);
    };
  }

  /** Applies the operation to the copy at once and sends it to Redis; the answer brings the copy up to date. */
  private send(operation: BudgetOperation): void {
    const atMs = this.serverNow();
    this.sharedCounts.apply(operation, atMs);
    const sequence = this.sent++;
    this.pending.push({ operation, atMs, sequence });
    this.call(operation).then(
      (answer) => this.take(answer, sequence),
      () => {
        // Redis is unavailable now: what was on its way is lost, and the stand-in takes over.
        this.pending = [];
      },
    );
  }

  /** The copy becomes Redis's counts as of the operation at `sequence`, plus the operations sent after it. */
  private take(answer: BudgetAnswer, sequence: number): void {
    if (sequence <= this.takenSequence) return;
    this.takenSequence = sequence;
    this.pending = this.pending.filter((entry) => entry.sequence > sequence);
    if (this.connection.timeSource === 'redis') this.offsetMs = answer.now - this.clock.now();
    this.sharedCounts.load(answer);
    for (const { operation, atMs } of this.pending) this.sharedCounts.apply(operation, atMs);
  }

  private standIn(): RetryBudgetStore | undefined {
    if (this.rule === 'closed') return undefined;
    this.local ??= memoryRetryBudgetStore({ ...this.options, initialSpent: this.sharedCounts.spent });
    return this.local;
  }

  private async call(operation: BudgetOperation | 'sync'): Promise<BudgetAnswer> {
    const nowArgument = this.connection.timeSource === 'clock' ? String(this.clock.now()) : '';
    const answer = await this.connection.run('retryBudget', this.key, [
      operation,
      nowArgument,
      String(this.limits.windowMs),
      String(this.connection.ttlMs),
      this.windowed ? '1' : '0',
      String(this.initialSpent),
    ]);
    return JSON.parse(answer as string) as BudgetAnswer;
  }

  private serverNow(): number {
    return this.clock.now() + this.offsetMs;
  }
}
