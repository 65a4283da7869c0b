import { agent, MemoryRunStore, type RunStore } from '@keel/core';
import { scriptedModel } from '@keel/core/testing';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FleetFixture } from './fleet-fixture.js';
import { TenantSlots } from './tenant-slots.js';

const redisUrl = process.env.KEEL_TEST_REDIS_URL;
if (redisUrl === undefined)
  throw new Error('KEEL_TEST_REDIS_URL is not set: the vitest global setup starts Redis');

/** A model whose calls wait to be let go, counting the calls in flight by tenant (the prompt's first word). */
class HeldModel {
  readonly started: string[] = [];
  readonly most = new Map<string, number>();
  private readonly inFlight = new Map<string, number>();
  private readonly open = new Map<string, () => void>();
  private readonly waiters: Array<() => void> = [];
  readonly model = scriptedModel(async (request) => {
    const prompt = request.messages.at(-1)!.content;
    const tenant = prompt.split('-')[0]!;
    this.inFlight.set(tenant, (this.inFlight.get(tenant) ?? 0) + 1);
    this.most.set(tenant, Math.max(this.most.get(tenant) ?? 0, this.inFlight.get(tenant)!));
    await new Promise<void>((resolve) => {
      this.open.set(prompt, resolve);
      this.started.push(prompt);
      for (const wake of this.waiters.splice(0)) wake();
    });
    this.inFlight.set(tenant, this.inFlight.get(tenant)! - 1);
    return { content: `done ${prompt}` };
  });

  /** Resolves once calls with these prompts have all started. */
  async entered(...prompts: string[]): Promise<void> {
    while (!prompts.every((prompt) => this.open.has(prompt)))
      await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Resolves with the first started call (now or later) whose prompt `matches`. */
  async next(matches: (prompt: string) => boolean): Promise<string> {
    for (;;) {
      const found = this.started.find(matches);
      if (found !== undefined) return found;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  release(prompt: string): void {
    this.open.get(prompt)!();
  }
}

function deskAgent(store: RunStore, held: HeldModel, owner: string) {
  return agent({ name: 'desk', model: held.model, store, durability: { leaseTtlMs: 5_000, owner } });
}

const client = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
afterAll(() => client.quit());

let fixture: FleetFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

describe('tenant limits across a fleet', () => {
  it("two workers never run 2 runs of a tenant limited to 1, while another tenant's runs go on", async () => {
    const store = new MemoryRunStore();
    fixture = new FleetFixture(store, redisUrl!);
    const held = new HeldModel();
    const tenants = { maxConcurrentRuns: 1, perTenant: { other: 2 }, retryDelayMs: 20 };
    fixture.worker([deskAgent(store, held, 'worker-a')], { concurrency: 4, tenants });
    fixture.worker([deskAgent(store, held, 'worker-b')], { concurrency: 4, tenants });
    const acme = [];
    for (const prompt of ['acme-1', 'acme-2', 'acme-3'])
      acme.push((await fixture.queue.submit('desk', prompt, { tenant: 'acme' })).runId);
    const other = [];
    for (const prompt of ['other-1', 'other-2'])
      other.push((await fixture.queue.submit('desk', prompt, { tenant: 'other' })).runId);
    await held.entered('other-1', 'other-2');
    await fixture.event((event) => event.type === 'run-requeued' && event.reason === 'tenant_busy');
    const first = held.started.find((prompt) => prompt.startsWith('acme'))!;
    expect(held.started.filter((prompt) => prompt.startsWith('acme'))).toEqual([first]);
    held.release('other-1');
    held.release('other-2');
    for (const runId of other) expect(await fixture.finished(runId)).toMatchObject({ status: 'completed' });
    // The acme runs go one at a time, each started once the one before it let go of the tenant's place.
    const done = new Set<string>();
    for (let index = 0; index < 3; index++) {
      const prompt = await held.next((started) => started.startsWith('acme') && !done.has(started));
      done.add(prompt);
      held.release(prompt);
      const runId = acme[Number(prompt.split('-')[1]) - 1]!;
      expect(await fixture.finished(runId)).toMatchObject({ status: 'completed' });
    }
    expect(held.most.get('acme')).toBe(1);
    expect(held.most.get('other')).toBe(2);
    expect(await new TenantSlots(client, fixture.prefix, tenants).holders('acme')).toEqual([]);
  });

  it("a dead holder's place comes back once its lease ends; a renewed one is kept", async () => {
    const slots = new TenantSlots(client, `keel-test-slots-${process.pid}-${Date.now()}`, {
      maxConcurrentRuns: 1,
      leaseMs: 30_000,
    });
    const t0 = 1_700_000_000_000;
    expect(await slots.take('acme', 'dead', t0)).toEqual({ taken: true });
    expect(await slots.take('acme', 'b', t0 + 10_000)).toEqual({ taken: false, leaseEndsInMs: 20_000 });
    expect(await slots.take('other', 'c', t0 + 10_000)).toEqual({ taken: true });
    // The holder died: no renewal. Its lease ends 30 s after it was taken.
    expect(await slots.take('acme', 'b', t0 + 30_000)).toEqual({ taken: true });
    expect(await slots.holders('acme')).toEqual(['b']);
    // A holder that renews keeps its place past its first lease.
    await slots.renew('acme', 'b', t0 + 50_000);
    expect((await slots.take('acme', 'd', t0 + 70_000)).taken).toBe(false);
    await slots.give('acme', 'b');
    expect(await slots.take('acme', 'd', t0 + 70_000)).toEqual({ taken: true });
  });

  it("a worker's run waits for a place a killed worker held, and runs once that lease ends", async () => {
    const store = new MemoryRunStore();
    fixture = new FleetFixture(store, redisUrl!);
    const held = new HeldModel();
    const tenants = { maxConcurrentRuns: 1, leaseMs: 500, retryDelayMs: 50 };
    // A worker that was SIGKILLed while it ran a run of acme: its place stays taken, unrenewed.
    expect(await new TenantSlots(client, fixture.prefix, tenants).take('acme', 'killed-run')).toEqual({
      taken: true,
    });
    fixture.worker([deskAgent(store, held, 'worker-a')], { tenants });
    const { runId } = await fixture.queue.submit('desk', 'acme-1', { tenant: 'acme' });
    await fixture.event(
      (event) => event.type === 'run-requeued' && event.runId === runId && event.reason === 'tenant_busy',
    );
    await held.entered('acme-1');
    held.release('acme-1');
    expect(await fixture.finished(runId)).toMatchObject({ status: 'completed' });
  });

  it("a stalled job taken by a second worker while the first still runs it never frees the first one's place", async () => {
    const prefix = `keel-test-slots-${process.pid}-${Date.now()}-stalled`;
    const [first, second] = [0, 1].map(() => new TenantSlots(client, prefix, { maxConcurrentRuns: 1 }));
    const running = await first!.hold('acme', 'run-1');
    expect(running).toBeDefined();
    // The job stalled (the first worker's lock lapsed) and the second worker took it: it ends without running it.
    const taken = await second!.hold('acme', 'run-1');
    await taken?.release();
    // The first worker still runs run-1: acme's one place is still taken.
    expect(await second!.hold('acme', 'run-2')).toBeUndefined();
    await running!.release();
    const next = await second!.hold('acme', 'run-2');
    expect(next).toBeDefined();
    await next!.release();
  });

  it("says a store failure loading the run's tenant is the store's, not Redis's, and tries the run again", async () => {
    let failLoads = 0;
    const store = new (class extends MemoryRunStore {
      override async loadRun(runId: string) {
        if (failLoads > 0) {
          failLoads--;
          throw new Error('disk gone');
        }
        return super.loadRun(runId);
      }
    })();
    fixture = new FleetFixture(store, redisUrl!);
    const held = new HeldModel();
    // Submitted with no tenant: the worker learns it from the run's state.
    const { runId } = await fixture.queue.submit('desk', 'default-1');
    failLoads = 1;
    fixture.worker([deskAgent(store, held, 'worker-a')], {
      tenants: { maxConcurrentRuns: 1 },
      retryDelayMs: 20,
    });
    const failure = await fixture.event((event) => event.type === 'worker-error' && event.runId === runId);
    expect((failure as { error: Error }).error.message).toBe(
      `the store could not load run ${runId} to learn its tenant: disk gone`,
    );
    await held.entered('default-1');
    held.release('default-1');
    expect(await fixture.finished(runId)).toMatchObject({ status: 'completed' });
  });

  it('refuses bad tenants options with config.invalid', () => {
    expect(() => new TenantSlots(client, 'x', { maxConcurrentRuns: 0 })).toThrow(
      /tenants\.maxConcurrentRuns/,
    );
    expect(() => new TenantSlots(client, 'x', { maxConcurrentRuns: 1, lease: 5 } as never)).toThrow(
      /tenants has an unknown option "lease"/,
    );
  });

  it('refuses a perTenant that is not an object by tenant with config.invalid, not silently', () => {
    for (const perTenant of [5, 'acme', [3], null]) {
      let caught: unknown;
      try {
        new TenantSlots(client, 'x', { maxConcurrentRuns: 1, perTenant } as never);
      } catch (error) {
        caught = error;
      }
      expect(caught).toMatchObject({ code: 'config.invalid' });
      expect((caught as Error).message).toMatch(/tenants\.perTenant must be an object by tenant/);
    }
    expect(() => new TenantSlots(client, 'x', { maxConcurrentRuns: 1, perTenant: { acme: 0 } })).toThrow(
      /tenants\.perTenant\.acme/,
    );
  });
});
