import { describe, expect, it } from 'vitest';
import { agent } from '../agent/agent.js';
import { KeelError } from '../errors/keel-error.js';
import type { ModelRequest } from '../spec/model.js';
import { FakeClock } from '../testing/fake-clock.js';
import { scriptedModel } from '../testing/scripted-model.js';

/** A model whose calls stay open until released, and that counts the calls in flight by the prompt's tenant. */
function heldModel() {
  const inFlight = new Map<string, number>();
  const most = new Map<string, number>();
  const started: string[] = [];
  const releases = new Map<string, () => void>();
  const model = scriptedModel(async (request: ModelRequest) => {
    const prompt = request.messages.at(-1)!.content;
    const tenant = prompt.split('-')[0]!;
    started.push(prompt);
    inFlight.set(tenant, (inFlight.get(tenant) ?? 0) + 1);
    most.set(tenant, Math.max(most.get(tenant) ?? 0, inFlight.get(tenant)!));
    await new Promise<void>((resolve) => releases.set(prompt, resolve));
    inFlight.set(tenant, inFlight.get(tenant)! - 1);
    return { content: `done ${prompt}` };
  });
  return { model, started, most, release: (prompt: string) => releases.get(prompt)!() };
}

/** Lets the promise callbacks run: the runs reach their model call, or their wait. */
async function settle(): Promise<void> {
  for (let index = 0; index < 20; index++) await new Promise((done) => setImmediate(done));
}

describe('per-tenant concurrency limits', () => {
  it("runs beyond a tenant's limit wait in order while another tenant's runs go on", async () => {
    const held = heldModel();
    const clock = new FakeClock();
    const assistant = agent({
      model: held.model,
      clock,
      tenants: { maxConcurrentRuns: 1, perTenant: { other: 2 } },
    });
    const acme = ['acme-1', 'acme-2', 'acme-3'].map((prompt) => assistant.run(prompt, { tenant: 'acme' }));
    const other = ['other-1', 'other-2'].map((prompt) => assistant.run(prompt, { tenant: 'other' }));
    await settle();
    expect(held.started).toEqual(['acme-1', 'other-1', 'other-2']);
    held.release('acme-1');
    await settle();
    expect(held.started.at(-1)).toBe('acme-2');
    held.release('acme-2');
    await settle();
    expect(held.started.at(-1)).toBe('acme-3');
    for (const prompt of ['acme-3', 'other-1', 'other-2']) held.release(prompt);
    const results = await Promise.all([...acme, ...other]);
    expect(results.map((result) => result.status)).toEqual(Array(5).fill('completed'));
    expect(held.most.get('acme')).toBe(1);
    expect(held.most.get('other')).toBe(2);
  });

  it('refuses a run when its tenant queue is full or it waited maxWaitMs; a cancelled wait rejects', async () => {
    const held = heldModel();
    const clock = new FakeClock();
    const assistant = agent({
      model: held.model,
      clock,
      tenants: { maxConcurrentRuns: 1, maxQueuedRuns: 1, maxWaitMs: 5_000 },
    });
    const first = assistant.run('acme-1', { tenant: 'acme' });
    const waiting = assistant.run('acme-2', { tenant: 'acme' });
    const waitingOutcome = waiting.catch((error: unknown) => error);
    await settle();
    const overflow = await assistant.run('acme-3', { tenant: 'acme' }).catch((error: unknown) => error);
    expect(KeelError.isInstance(overflow) && overflow.code).toBe('policy.bulkhead_full');
    expect((overflow as KeelError).data).toMatchObject({
      tenant: 'acme',
      maxConcurrentRuns: 1,
      maxQueuedRuns: 1,
      reason: 'queue_full',
    });
    expect((overflow as KeelError).retryable).toBe(true);
    // Runs with no tenant are tenant `default`: they have their own place.
    const untenanted = assistant.run('default-1');
    await settle();
    expect(held.started).toEqual(['acme-1', 'default-1']);
    await clock.advance(5_000);
    const timedOut = await waitingOutcome;
    expect(KeelError.isInstance(timedOut) && timedOut.data).toMatchObject({
      tenant: 'acme',
      reason: 'wait_timeout',
    });
    expect(held.started).not.toContain('acme-2');
    const controller = new AbortController();
    const cancelled = assistant
      .run('acme-4', { tenant: 'acme', signal: controller.signal })
      .catch((error: unknown) => error);
    await settle();
    controller.abort();
    expect(KeelError.isInstance(await cancelled) && ((await cancelled) as KeelError).code).toBe(
      'run.cancelled',
    );
    held.release('acme-1');
    held.release('default-1');
    expect((await first).status).toBe('completed');
    expect((await untenanted).status).toBe('completed');
    // The place came back: the next run of the tenant starts at once.
    const next = assistant.run('acme-5', { tenant: 'acme' });
    await settle();
    held.release('acme-5');
    expect((await next).status).toBe('completed');
  });

  it('refuses bad tenants options with config.invalid saying what to write', () => {
    const model = scriptedModel([{ content: 'ok' }]);
    expect(() => agent({ model, tenants: { maxConcurrentRuns: 0 } })).toThrow(
      /tenants\.maxConcurrentRuns must be an integer of at least 1; got 0/,
    );
    expect(() => agent({ model, tenants: { maxConcurrentRuns: 1, perTenant: { acme: 1.5 } } })).toThrow(
      /tenants\.perTenant\.acme must be an integer of at least 1/,
    );
    expect(() => agent({ model, tenants: { maxConcurrentRuns: 1, maxQueue: 3 } as never })).toThrow(
      /tenants has an unknown option "maxQueue"/,
    );
  });
});
