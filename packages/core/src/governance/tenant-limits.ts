import { KeelError } from '../errors/keel-error.js';
import { optionError } from '../options/option-error.js';
import type { Clock, TimerHandle } from '../policies/clock.js';

/**
 * The agent's `tenants` option: how many runs of one tenant (the run option `tenant`; runs with none are tenant
 * `default`) this agent runs at once. A run beyond its tenant's limit waits, in arrival order, before anything ran
 * (its run timeout starts once it runs); another tenant's runs go on meanwhile. A run that finds `maxQueuedRuns` runs
 * of its tenant already waiting, or that waits `maxWaitMs`, is refused: `agent.run` rejects with `policy.bulkhead_full`
 * (retryable; `data`: `tenant`, `maxConcurrentRuns`, `maxQueuedRuns`, `maxWaitMs`, `reason` `queue_full` or
 * `wait_timeout`). A run whose `signal` aborts while it waits rejects with `run.cancelled`.
 *
 * The limit is per agent and per process; child runs (an agent used as a tool, a handoff) run within their parent's
 * place, and `resume` is not held (a fleet's workers hold tenants' places across processes: `@keel/worker`'s
 * `tenants` option).
 *
 * @example
 *   agent({ model, tenants: { maxConcurrentRuns: 2, perTenant: { acme: 10 }, maxWaitMs: 30_000 } });
 */
export interface TenantOptions {
  /** Most runs of one tenant at once. Required: a positive integer. */
  readonly maxConcurrentRuns: number;
  /** Limits of named tenants, in place of `maxConcurrentRuns` for them: `{ acme: 10 }`. Defaults to none. */
  readonly perTenant?: Readonly<Record<string, number>>;
  /** Most runs of one tenant waiting for a place at once; one more is refused. Defaults to 100. */
  readonly maxQueuedRuns?: number;
  /** The longest a run waits for a place, in milliseconds; then it is refused. Defaults to 60_000. */
  readonly maxWaitMs?: number;
}

/** Why a run was refused a place. */
export type TenantRefusal = 'queue_full' | 'wait_timeout';

/** Hands out the places of each tenant's runs in this process (see {@link TenantOptions}). */
export interface TenantGate {
  /**
   * Waits for a place of `tenant`'s, and resolves with the function that gives it back (call it once the run ended).
   * Rejects with `policy.bulkhead_full` or, when `signal` aborts, with `run.cancelled`.
   */
  acquire(tenant: string, signal: AbortSignal | undefined): Promise<() => void>;
  /** Runs of `tenant` holding a place now. */
  running(tenant: string): number;
  /** Runs of `tenant` waiting for a place now. */
  waiting(tenant: string): number;
}

interface Waiter {
  readonly grant: () => void;
}

interface TenantLine {
  running: number;
  readonly queue: Set<Waiter>;
}

const KNOWN = ['maxConcurrentRuns', 'perTenant', 'maxQueuedRuns', 'maxWaitMs'];

/** Checks the `tenants` option (a bad one throws `config.invalid`) and makes its gate; undefined when not set. */
export function resolveTenantLimits(
  options: TenantOptions | undefined,
  clock: Clock,
  where = 'agent',
): TenantGate | undefined {
  if (options === undefined) return undefined;
  const fail = (option: string, message: string): never => {
    throw optionError({ where, option, message });
  };
  if (typeof options !== 'object' || options === null) {
    fail('tenants', 'tenants must be an object such as { maxConcurrentRuns: 2 }');
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN.includes(key))
      fail(`tenants.${key}`, `tenants has an unknown option "${key}"; known: ${KNOWN.join(', ')}`);
  }
  const count = (value: unknown, option: string, min: number): number => {
    if (!(typeof value === 'number' && Number.isInteger(value) && value >= min)) {
      fail(option, `${option} must be an integer of at least ${min}; got ${String(value)}`);
    }
    return value as number;
  };
  const maxConcurrentRuns = count(options.maxConcurrentRuns, 'tenants.maxConcurrentRuns', 1);
  const perTenant = new Map<string, number>();
  if (options.perTenant !== undefined) {
    if (typeof options.perTenant !== 'object' || options.perTenant === null) {
      fail('tenants.perTenant', 'tenants.perTenant must be an object by tenant, such as { acme: 10 }');
    }
    for (const [tenant, limit] of Object.entries(options.perTenant)) {
      perTenant.set(tenant, count(limit, `tenants.perTenant.${tenant}`, 1));
    }
  }
  const maxQueuedRuns = count(options.maxQueuedRuns ?? 100, 'tenants.maxQueuedRuns', 0);
  const maxWaitMs = count(options.maxWaitMs ?? 60_000, 'tenants.maxWaitMs', 0);
  if (maxWaitMs > 2_147_483_647) fail('tenants.maxWaitMs', 'tenants.maxWaitMs must be at most 2147483647');
  return tenantGate({ maxConcurrentRuns, perTenant, maxQueuedRuns, maxWaitMs }, clock);
}

interface GateSettings {
  readonly maxConcurrentRuns: number;
  readonly perTenant: ReadonlyMap<string, number>;
  readonly maxQueuedRuns: number;
  readonly maxWaitMs: number;
}

function tenantGate(settings: GateSettings, clock: Clock): TenantGate {
  const lines = new Map<string, TenantLine>();
  const limitOf = (tenant: string) => settings.perTenant.get(tenant) ?? settings.maxConcurrentRuns;
  const lineOf = (tenant: string): TenantLine => {
    let line = lines.get(tenant);
    if (line === undefined) {
      line = { running: 0, queue: new Set() };
      lines.set(tenant, line);
    }
    return line;
  };
  const releaser = (tenant: string, line: TenantLine) => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const waiter of line.queue) {
        // The place passes straight to the oldest waiter: `running` stays the same, so no newcomer can take it.
        line.queue.delete(waiter);
        waiter.grant();
        return;
      }
      line.running--;
      if (line.running === 0) lines.delete(tenant);
    };
  };
  const refuse = (tenant: string, reason: TenantRefusal): KeelError => {
    const limit = limitOf(tenant);
    const why =
      reason === 'queue_full'
        ? `${settings.maxQueuedRuns} runs of it already wait (tenants.maxQueuedRuns)`
        : `it waited ${settings.maxWaitMs} ms (tenants.maxWaitMs)`;
    return new KeelError(
      'policy.bulkhead_full',
      `A run of tenant "${tenant}" was not started: ${limit} runs of the tenant are running (its limit) and ${why}`,
      {
        data: {
          tenant,
          maxConcurrentRuns: limit,
          maxQueuedRuns: settings.maxQueuedRuns,
          maxWaitMs: settings.maxWaitMs,
          reason,
        },
        guidance:
          "Submit the run again later, or raise the tenant's limit (tenants.maxConcurrentRuns, tenants.perTenant) or its queue (tenants.maxQueuedRuns, tenants.maxWaitMs).",
      },
    );
  };
  return {
    acquire(tenant, signal) {
      if (signal?.aborted) return Promise.reject(cancelled(tenant, signal.reason));
      const line = lineOf(tenant);
      if (line.running < limitOf(tenant)) {
        line.running++;
        return Promise.resolve(releaser(tenant, line));
      }
      if (line.queue.size >= settings.maxQueuedRuns) return Promise.reject(refuse(tenant, 'queue_full'));
      return new Promise((resolve, reject) => {
        let timer: TimerHandle | undefined;
        const leave = () => {
          line.queue.delete(waiter);
          if (timer !== undefined) clock.clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        };
        const waiter: Waiter = {
          grant: () => {
            leave();
            resolve(releaser(tenant, line));
          },
        };
        const onAbort = () => {
          leave();
          reject(cancelled(tenant, signal!.reason));
        };
        line.queue.add(waiter);
        timer = clock.setTimeout(() => {
          leave();
          reject(refuse(tenant, 'wait_timeout'));
        }, settings.maxWaitMs);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
    running: (tenant) => lines.get(tenant)?.running ?? 0,
    waiting: (tenant) => lines.get(tenant)?.queue.size ?? 0,
  };
}

function cancelled(tenant: string, reason: unknown): KeelError {
  return new KeelError(
    'run.cancelled',
    `A run of tenant "${tenant}" was cancelled while it waited for a place`,
    { data: { tenant }, cause: reason },
  );
}
