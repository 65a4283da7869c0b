// Runs made by keel's real run loop (scripted models, real stores) for the dashboard's tests. Not part of the build.
import { type Agent, agent, KeelError, queuedRun, type RunResult, type RunStore, tool } from '@keel/core';
import { FaultyRunStore, scriptedModel } from '@keel/core/testing';
import type { ResumeRun } from '../resume.js';

/** Text that would run script if it ever reached the page as markup. */
export const HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';

function ticketTool(executions: string[]) {
  return tool({
    name: 'create_ticket',
    description: 'Opens a support ticket (a side effect).',
    input: {
      type: 'object',
      properties: { title: { type: 'string' }, priority: { type: 'string' } },
      required: ['title'],
    },
    idempotent: false,
    needsApproval: true,
    execute: async (input, { idempotencyKey }) => {
      executions.push(idempotencyKey);
      return { ticket: 'T-1', title: (input as { title: string }).title };
    },
  });
}

/**
 * A run interrupted for approval of a `create_ticket` call whose arguments hold `title`. Returns the run id and the
 * call's idempotency key, and the list the tool appends to when it executes.
 */
export async function interruptedRun(
  store: RunStore,
  options: { title: string; task?: string },
): Promise<{ runId: string; key: string; executions: string[]; agent: Agent<string> }> {
  const executions: string[] = [];
  const support = agent({
    name: 'support',
    model: scriptedModel([
      { toolCalls: [{ name: 'create_ticket', arguments: { title: options.title, priority: 'urgent' } }] },
      { content: 'Ticket opened.' },
    ]),
    tools: [ticketTool(executions)],
    store,
  });
  const result = await support.run(options.task ?? 'Open an urgent ticket');
  if (result.status !== 'interrupted' || result.pending?.[0] === undefined) {
    throw new Error(`expected an interrupted run, got ${result.status}`);
  }
  return { runId: result.runId, key: result.pending[0].idempotencyKey, executions, agent: support };
}

/**
 * A run whose `charge_card` call may or may not have run: the store fails while the call executes (so its completion
 * is never recorded), then comes back, and the resumed run asks whether to execute the call again or abandon it.
 */
export async function uncertainRun(
  store: RunStore,
): Promise<{ runId: string; key: string; executions: string[]; agent: Agent<string> }> {
  const faulty = new FaultyRunStore(store);
  const executions: string[] = [];
  const billing = agent({
    name: 'billing',
    model: scriptedModel([
      { toolCalls: [{ name: 'charge_card', arguments: { amountEur: 40 } }] },
      { content: 'I could not confirm the charge.' },
    ]),
    tools: [
      tool({
        name: 'charge_card',
        description: 'Charges the card on file (a side effect).',
        input: { type: 'object', properties: { amountEur: { type: 'number' } }, required: ['amountEur'] },
        idempotent: false,
        execute: async (_input, { idempotencyKey }) => {
          executions.push(idempotencyKey);
          faulty.down = true;
          return { charged: true };
        },
      }),
    ],
    store: faulty,
    durability: { storeMaxAttempts: 1 },
  });
  const paused = await billing.run('Charge 40 EUR');
  faulty.down = false;
  const result = await billing.resume(paused.runId);
  if (result.stopReason !== 'decision_required' || result.pending?.[0] === undefined) {
    throw new Error(`expected a run waiting for a decision, got ${result.status} (${result.stopReason})`);
  }
  return { runId: result.runId, key: result.pending[0].idempotencyKey, executions, agent: billing };
}

/** A resume hook over agents in this process, by agent name: what `keel dashboard` does through `keel resume`. */
export function resumeWith(agents: Map<string, Agent<string>>): ResumeRun {
  return async (request) => {
    const target = agents.get(request.agentName);
    if (target === undefined) throw new KeelError('config.invalid', `No agent ${request.agentName} here`);
    const finished = target
      .resume(request.runId, { approvals: request.approvals, decisions: request.decisions })
      .then((result) => ({ status: result.status, stopReason: result.stopReason }));
    return { finished };
  };
}

/**
 * A completed run whose primary model is rate limited (retried at once: Retry-After 0) then overloaded, so the run
 * falls back to a second model, which calls `get_weather` and answers.
 */
export async function fallbackRun(store: RunStore): Promise<string> {
  const weather = tool({
    name: 'get_weather',
    description: 'Current weather for a city',
    input: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    idempotent: true,
    execute: async (input) => ({ city: (input as { city: string }).city, temperatureC: 20 }),
  });
  const travel = agent({
    name: 'weather',
    model: scriptedModel(
      [
        new KeelError('provider.rate_limited', 'slow down', { retryAfterMs: 0 }),
        new KeelError('provider.overloaded', 'busy'),
      ],
      { provider: 'scripted', model: 'primary' },
    ),
    fallbacks: [
      scriptedModel(
        [
          { toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] },
          { content: 'Sunny in Paris.' },
        ],
        { provider: 'scripted', model: 'fallback' },
      ),
    ],
    tools: [weather],
    retry: { maxAttempts: 2 },
    store,
  });
  const result = await travel.run('Weather in Paris?');
  if (result.status !== 'completed') throw new Error(`expected a completed run, got ${result.status}`);
  return result.runId;
}

/**
 * A run submitted to a fleet (stored `queued` as `runQueue().submit` stores it) and taken by a worker: the agent
 * named `owner` resumes it, as `keel worker` does, and its `lookup_order` call holds until `release()`. Resolves once
 * the call runs, the run `running` and leased to `owner`; `finished` settles after `release()`.
 */
export async function runHeldByWorker(
  store: RunStore,
  options: { owner: string; task: string; submittedAtMs: number; leaseTtlMs?: number },
): Promise<{ runId: string; release: () => void; finished: Promise<RunResult<string>> }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let calling!: () => void;
  const called = new Promise<void>((resolve) => {
    calling = resolve;
  });
  const worker = agent({
    name: 'orders',
    model: scriptedModel([
      { toolCalls: [{ name: 'lookup_order', arguments: { order: 42 } }] },
      { content: 'Order 42 ships today.' },
    ]),
    tools: [
      tool({
        name: 'lookup_order',
        description: 'Looks an order up.',
        input: { type: 'object', properties: { order: { type: 'number' } }, required: ['order'] },
        idempotent: true,
        execute: async () => {
          calling();
          await released;
          return { order: 42, ships: 'today' };
        },
      }),
    ],
    store,
    durability: {
      owner: options.owner,
      ...(options.leaseTtlMs === undefined ? {} : { leaseTtlMs: options.leaseTtlMs }),
    },
  });
  const runId = `held-by-${options.owner}`;
  await store.createRun(
    queuedRun({ runId, agentName: 'orders', input: options.task, nowMs: options.submittedAtMs }),
  );
  const finished = worker.resume(runId);
  await Promise.race([called, finished]);
  return { runId, release, finished };
}
