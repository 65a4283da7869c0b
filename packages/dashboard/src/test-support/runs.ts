// Runs made by keel's real run loop (scripted models, real stores) for the dashboard's tests. Not part of the build.
import { agent, KeelError, type RunStore, tool } from '@keel/core';
import { scriptedModel } from '@keel/core/testing';

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
): Promise<{ runId: string; key: string; executions: string[] }> {
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
  return { runId: result.runId, key: result.pending[0].idempotencyKey, executions };
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
