import { describe, expect, it } from 'vitest';
import { KeelError } from '../../errors/keel-error.js';
import { consecutive } from '../../policies/breaker/consecutive.js';
import { constant } from '../../policies/delays.js';
import type { Message } from '../../spec/model.js';
import type { RunEvent } from '../../spec/run-events.js';
import type { ToolContext, ToolFallbackContext } from '../../spec/tool.js';
import { MemoryRunStore } from '../../store/memory-run-store.js';
import { FakeClock } from '../../testing/fake-clock.js';
import { type ScriptedStep, scriptedModel } from '../../testing/scripted-model.js';
import { type Agent, agent } from '../agent.js';
import type { AgentOptions } from '../agent-options.js';
import type { RunResult } from '../loop/run.js';
import { stopRun } from '../run/directives.js';
import { tool } from './tool.js';

const queryInput = {
  type: 'object',
  properties: { query: { type: 'string' } },
  required: ['query'],
  additionalProperties: false,
} as const;

async function runOnClock(clock: FakeClock, assistant: Agent, events: RunEvent[] = []): Promise<RunResult> {
  let done = false;
  const pending = assistant.run('go', { onEvent: (event) => events.push(event) }).finally(() => {
    done = true;
  });
  while (!done) await clock.advance(10);
  return pending;
}

function build(clock: FakeClock, script: readonly ScriptedStep[], options: Partial<AgentOptions> = {}) {
  const model = scriptedModel(script);
  return { model, assistant: agent({ model, clock, retry: { delay: constant(100) }, ...options }) };
}

function toolResults(messages: readonly Message[]): unknown[] {
  return messages.filter((message) => message.role === 'tool').map((message) => JSON.parse(message.content));
}

const searchOnce: ScriptedStep[] = [
  { toolCalls: [{ name: 'search', arguments: { query: 'keel' } }] },
  { content: 'done' },
];

function failing(
  name: string,
  error: () => unknown,
  options: { idempotent?: boolean; calls?: ToolContext[] } = {},
) {
  return tool({
    name,
    description: `${name} (failing)`,
    input: queryInput,
    idempotent: options.idempotent ?? true,
    execute: (_input, context) => {
      options.calls?.push(context);
      throw error();
    },
  });
}

function answering(name: string, calls: ToolContext[] = []) {
  return tool({
    name,
    description: `${name} (answering)`,
    input: queryInput,
    idempotent: true,
    execute: ({ query }: { query: string }, context) => {
      calls.push(context);
      return { hits: [`${query} from ${name}`] };
    },
  });
}

describe('tool fallbacks: a degraded result instead of a failure', () => {
  it('answers a timed-out tool with a value fallback, tells the model it is degraded, emits an event and counts it', async () => {
    const clock = new FakeClock();
    const contexts: ToolFallbackContext[] = [];
    const search = tool({
      name: 'search',
      description: 'Searches the live index',
      input: queryInput,
      idempotent: true,
      timeoutMs: 1_000,
      execute: () => new Promise(() => {}),
      fallbacks: [
        {
          name: 'search_cache',
          value: ({ query }: { query: string }, context) => {
            contexts.push(context);
            return { hits: [`${query} (cached)`] };
          },
        },
      ],
    });
    const events: RunEvent[] = [];
    const { model, assistant } = build(clock, searchOnce, { tools: [search], retry: { toolMaxAttempts: 1 } });
    const result = await runOnClock(clock, assistant, events);

    expect(result.status).toBe('completed');
    const reason =
      'search failed (tool.timeout: Timed out after 1000 ms); this result comes from search_cache instead and may be incomplete or out of date.';
    expect(toolResults(model.calls[1]!.messages)).toEqual([
      {
        status: 'success',
        content: { hits: ['keel (cached)'] },
        degraded: { from: 'search', to: 'search_cache', errorCode: 'tool.timeout', reason },
      },
    ]);
    expect(contexts[0]).toMatchObject({
      idempotencyKey: `${result.runId}:1:0`,
      error: { code: 'tool.timeout' },
    });
    expect(result.report.degradations).toEqual({ total: 1, byTool: { search: 1 } });
    expect(result.report.toolCalls).toMatchObject({ total: 1, errors: 0 });
    expect(result.report.errors.byCode['tool.timeout']).toBeGreaterThanOrEqual(1);
    const degraded = events.filter((event) => event.type === 'tool-degraded');
    expect(degraded).toEqual([
      expect.objectContaining({
        type: 'tool-degraded',
        step: 1,
        callIndex: 0,
        toolName: 'search',
        fallback: 'search_cache',
        errorCode: 'tool.timeout',
        reason,
      }),
    ]);
    expect(events.find((event) => event.type === 'tool-call-end')).toMatchObject({ status: 'success' });
  });

  it('calls a replica tool with the same arguments and idempotency key when the primary is unavailable', async () => {
    const clock = new FakeClock();
    const primaryCalls: ToolContext[] = [];
    const replicaCalls: ToolContext[] = [];
    const search = failing(
      'search',
      () => new KeelError('tool.unavailable', 'index offline', { retryable: false }),
      {
        calls: primaryCalls,
      },
    );
    const withReplica = tool({
      ...search,
      input: queryInput,
      execute: search.execute,
      fallbacks: [{ tool: answering('search_replica', replicaCalls), reason: 'Served by the replica' }],
    });
    const { model, assistant } = build(clock, searchOnce, { tools: [withReplica] });
    const result = await runOnClock(clock, assistant);
    expect(result.report.degradations).toEqual({ total: 1, byTool: { search: 1 } });

    expect(toolResults(model.calls[1]!.messages)).toEqual([
      {
        status: 'success',
        content: { hits: ['keel from search_replica'] },
        degraded: {
          from: 'search',
          to: 'search_replica',
          errorCode: 'tool.unavailable',
          reason: 'Served by the replica',
        },
      },
    ]);
    expect(replicaCalls.map((context) => context.idempotencyKey)).toEqual([primaryCalls[0]!.idempotencyKey]);
    // The replica is not offered to the model: only the tools the agent lists are.
    expect(model.calls[0]!.tools?.map((definition) => definition.name)).toEqual(['search']);
  });

  it('falls back to the replica once the primary’s breaker is open, without calling the primary', async () => {
    const clock = new FakeClock();
    const primaryCalls: ToolContext[] = [];
    const primary = tool({
      name: 'search',
      description: 'Searches',
      input: queryInput,
      execute: (_input, context) => {
        primaryCalls.push(context);
        throw new KeelError('tool.failed', 'index corrupted');
      },
      fallbacks: [{ tool: answering('search_replica'), on: ['policy.circuit_open'] }],
    });
    const script: ScriptedStep[] = [
      { toolCalls: [{ name: 'search', arguments: { query: 'a' } }] },
      { toolCalls: [{ name: 'search', arguments: { query: 'b' } }] },
      { content: 'done' },
    ];
    const { model, assistant } = build(clock, script, {
      tools: [primary],
      toolBreaker: { strategy: consecutive({ threshold: 1 }), halfOpenAfterMs: 60_000 },
    });
    const result = await runOnClock(clock, assistant);

    const [first, second] = toolResults(model.calls[2]!.messages) as [
      { status: string; error: { code: string } },
      { status: string; degraded: { errorCode: string } },
    ];
    // tool.failed is not in `on`: the model sees the primary's own failure.
    expect(first).toMatchObject({
      status: 'error',
      error: { code: 'tool.failed', message: 'index corrupted' },
    });
    expect(second).toMatchObject({ status: 'success', degraded: { errorCode: 'policy.circuit_open' } });
    expect(primaryCalls).toHaveLength(1);
    expect(result.report.degradations).toEqual({ total: 1, byTool: { search: 1 } });
  });

  it('never runs a replica after a tool with side effects failed in a way that may have run it', async () => {
    const clock = new FakeClock();
    const replicaCalls: ToolContext[] = [];
    const charge = tool({
      name: 'search',
      description: 'Charges, then searches (a side effect)',
      input: queryInput,
      idempotent: false,
      execute: () => {
        throw new KeelError('network.connection', 'connection reset mid-request', {
          data: { systemCode: 'ECONNRESET' },
        });
      },
      fallbacks: [
        { tool: answering('search_replica', replicaCalls) },
        { name: 'apology', value: () => ({ hits: [] }), reason: 'No results: the search failed' },
      ],
    });
    const { model, assistant } = build(clock, searchOnce, { tools: [charge] });
    await runOnClock(clock, assistant);

    expect(replicaCalls).toHaveLength(0);
    expect(toolResults(model.calls[1]!.messages)).toEqual([
      {
        status: 'success',
        content: { hits: [] },
        degraded: {
          from: 'search',
          to: 'apology',
          errorCode: 'network.connection',
          reason: 'No results: the search failed',
        },
      },
    ]);
  });

  it('answers every failure by default: a plain Error and permission denied alike; `on` narrows it', async () => {
    const clock = new FakeClock();
    const answered: string[] = [];
    const search = failing('search', () => new KeelError('tool.permission_denied', 'not your index'));
    const guarded = tool({
      ...search,
      input: queryInput,
      execute: search.execute,
      fallbacks: [
        {
          value: (_input, context) => {
            answered.push(context.error.code);
            return 'cached';
          },
        },
      ],
    });
    const { model, assistant } = build(clock, searchOnce, { tools: [guarded] });
    const result = await runOnClock(clock, assistant);
    expect(answered).toEqual(['tool.permission_denied']);
    expect(result.report.degradations.total).toBe(1);
    expect(toolResults(model.calls[1]!.messages)).toMatchObject([
      { status: 'success', content: 'cached', degraded: { errorCode: 'tool.permission_denied' } },
    ]);

    // Narrowed to what says the tool could not serve: the caller's own fault reaches the model as it was.
    const narrowed = tool({
      ...search,
      input: queryInput,
      execute: search.execute,
      fallbacks: [{ value: () => 'cached', on: ['tool.unavailable', 'tool.timeout', 'network'] }],
    });
    const second = build(clock, searchOnce, { tools: [narrowed] });
    const narrowedResult = await runOnClock(clock, second.assistant);
    expect(toolResults(second.model.calls[1]!.messages)).toEqual([
      {
        status: 'error',
        error: { code: 'tool.permission_denied', message: 'not your index', retryable: false },
      },
    ]);
    expect(narrowedResult.report.degradations.total).toBe(0);
  });

  it('answers a tool that throws a plain Error (weather service 503) with its fallback', async () => {
    const clock = new FakeClock();
    const weather = failing('search', () => new Error('weather service 503'));
    const guarded = tool({
      ...weather,
      input: queryInput,
      execute: weather.execute,
      fallbacks: [{ value: () => 'last known forecast', reason: 'the last known forecast' }],
    });
    const { model, assistant } = build(clock, searchOnce, { tools: [guarded] });
    const result = await runOnClock(clock, assistant);
    expect(toolResults(model.calls[1]!.messages)).toMatchObject([
      {
        status: 'success',
        content: 'last known forecast',
        degraded: { errorCode: 'tool.failed', reason: 'the last known forecast' },
      },
    ]);
    expect(result.report.degradations).toEqual({ total: 1, byTool: { search: 1 } });
  });

  it('a 503 thrown by a tool with a side effect is tool.unavailable: nothing ran, so its fallback tool runs', async () => {
    const clock = new FakeClock();
    const replicaCalls: ToolContext[] = [];
    const primary = failing(
      'search',
      () => Object.assign(new Error('search service unavailable'), { status: 503 }),
      { idempotent: false },
    );
    const guarded = tool({
      ...primary,
      input: queryInput,
      execute: primary.execute,
      fallbacks: [{ tool: answering('search_replica', replicaCalls) }],
    });
    const events: RunEvent[] = [];
    const { model, assistant } = build(clock, searchOnce, {
      tools: [guarded],
      retry: { delay: constant(100), toolMaxAttempts: 1 },
    });
    const result = await runOnClock(clock, assistant, events);
    expect(replicaCalls).toHaveLength(1);
    expect(toolResults(model.calls[1]!.messages)).toMatchObject([
      {
        status: 'success',
        content: { hits: ['keel from search_replica'] },
        degraded: { from: 'search', to: 'search_replica', errorCode: 'tool.unavailable' },
      },
    ]);
    expect(result.report.errors.byCode).toMatchObject({ 'tool.unavailable': 1 });
    expect(JSON.stringify(result.report.errors.byCode)).not.toContain('provider.');
  });

  it('never answers a control signal: a tool that stops the run is not replaced by its fallback', async () => {
    const clock = new FakeClock();
    let fallbackRan = false;
    const stopping = failing('search', () => stopRun('enough'));
    const guarded = tool({
      ...stopping,
      input: queryInput,
      execute: stopping.execute,
      fallbacks: [
        {
          value: () => {
            fallbackRan = true;
            return 'cached';
          },
        },
      ],
    });
    const { assistant } = build(clock, searchOnce, { tools: [guarded] });
    const result = await runOnClock(clock, assistant);
    expect(fallbackRan).toBe(false);
    expect(result.report.degradations.total).toBe(0);
  });

  it('goes down the chain: the replica fails too, the value answers the replica’s failure', async () => {
    const clock = new FakeClock();
    const search = tool({
      name: 'search',
      description: 'Searches',
      input: queryInput,
      idempotent: true,
      execute: () => {
        throw new KeelError('provider.overloaded', 'busy', { retryable: true });
      },
      fallbacks: [
        {
          tool: failing(
            'search_replica',
            () => new KeelError('tool.unavailable', 'replica down', { retryable: false }),
          ),
        },
        { name: 'search_cache', value: () => 'cached', on: ['tool'] },
      ],
    });
    const { model, assistant } = build(clock, searchOnce, { tools: [search], retry: { toolMaxAttempts: 1 } });
    await runOnClock(clock, assistant);

    expect(toolResults(model.calls[1]!.messages)).toEqual([
      {
        status: 'success',
        content: 'cached',
        degraded: {
          from: 'search',
          to: 'search_cache',
          errorCode: 'provider.overloaded',
          reason:
            'search failed (provider.overloaded: busy); this result comes from search_cache instead and may be incomplete or out of date.',
        },
      },
    ]);
  });

  it('shows the last failure with the whole chain when every fallback fails', async () => {
    const clock = new FakeClock();
    const search = tool({
      name: 'search',
      description: 'Searches',
      input: queryInput,
      execute: () => {
        throw new KeelError('tool.unavailable', 'index offline', { retryable: false });
      },
      fallbacks: [
        {
          tool: failing(
            'search_replica',
            () => new KeelError('tool.unavailable', 'replica down', { retryable: false }),
          ),
        },
        {
          name: 'search_cache',
          value: () => {
            throw new Error('cache miss');
          },
        },
      ],
    });
    const { model, assistant } = build(clock, searchOnce, { tools: [search] });
    const result = await runOnClock(clock, assistant);

    const [failure] = toolResults(model.calls[1]!.messages) as [
      { status: string; error: Record<string, unknown> },
    ];
    expect(failure.status).toBe('error');
    expect(failure.error).toMatchObject({
      code: 'tool.failed',
      message:
        'search and its fallbacks failed: search (tool.unavailable: index offline); search_replica (tool.unavailable: replica down); search_cache (tool.failed: Tool "search_cache" failed: cache miss)',
      data: {
        failures: [
          { name: 'search', code: 'tool.unavailable', message: 'index offline' },
          { name: 'search_replica', code: 'tool.unavailable', message: 'replica down' },
          { name: 'search_cache', code: 'tool.failed', message: 'Tool "search_cache" failed: cache miss' },
        ],
      },
    });
    expect(result.report.degradations.total).toBe(0);
    expect(result.report.toolCalls.errors).toBe(1);
  });

  it('checks the arguments against the fallback tool’s own schema', async () => {
    const clock = new FakeClock();
    const strictReplica = tool({
      name: 'search_replica',
      description: 'Needs a long query',
      input: { ...queryInput, properties: { query: { type: 'string', minLength: 10 } } },
      execute: () => 'never',
    });
    const search = tool({
      ...failing('search', () => new KeelError('tool.unavailable', 'offline', { retryable: false })),
      input: queryInput,
      fallbacks: [{ tool: strictReplica }],
    });
    const { model, assistant } = build(clock, searchOnce, { tools: [search] });
    await runOnClock(clock, assistant);

    expect(toolResults(model.calls[1]!.messages)).toEqual([
      expect.objectContaining({
        status: 'error',
        error: expect.objectContaining({
          code: 'tool.invalid_input',
          message: expect.stringContaining('search and its fallbacks failed'),
        }),
      }),
    ]);
  });

  it('lets a stop directive and a cancellation pass: no fallback runs', async () => {
    const clock = new FakeClock();
    let fallbackRan = false;
    const fallbacks = [
      {
        value: () => {
          fallbackRan = true;
          return 'cached';
        },
        on: () => true,
      },
    ];
    const stopping = tool({
      name: 'search',
      description: 'Stops the run',
      input: queryInput,
      execute: () => {
        throw stopRun('enough');
      },
      fallbacks,
    });
    const { assistant } = build(clock, searchOnce, { tools: [stopping] });
    const stopped = await runOnClock(clock, assistant);
    expect(stopped.stopReason).toBe('stop_requested');

    const controller = new AbortController();
    const hanging = tool({
      name: 'search',
      description: 'Hangs until cancelled',
      input: queryInput,
      execute: (_input, context) =>
        new Promise((_resolve, reject) => {
          context.signal.addEventListener('abort', () => reject(new Error('aborted')));
          controller.abort(new Error('user left'));
        }),
      fallbacks,
    });
    const cancelled = await build(clock, searchOnce, { tools: [hanging] }).assistant.run('go', {
      signal: controller.signal,
    });
    expect(cancelled.status).toBe('cancelled');
    expect(fallbackRan).toBe(false);
  });

  it('keeps the degradation in the ledger, so a replayed result stays marked', async () => {
    const clock = new FakeClock();
    const store = new MemoryRunStore();
    const search = tool({
      ...failing('search', () => new KeelError('tool.unavailable', 'offline', { retryable: false })),
      input: queryInput,
      fallbacks: [{ name: 'search_cache', value: () => 'cached' }],
    });
    const { assistant } = build(clock, searchOnce, { tools: [search], store });
    const result = await runOnClock(clock, assistant);

    const [entry] = await store.ledger(result.runId);
    expect(entry?.result).toMatchObject({
      status: 'success',
      content: 'cached',
      degraded: { to: 'search_cache' },
    });
  });
});

describe('tool fallbacks: options', () => {
  const base = { name: 'search', description: 'Searches', input: queryInput, execute: () => 'x' };

  it.each<[Record<string, unknown>, string]>([
    [{ fallbacks: 'cache' }, 'fallbacks must be an array'],
    [{ fallbacks: [{}] }, 'needs exactly one of tool (another tool) and value (a function)'],
    [{ fallbacks: [{ tool: answering('r'), value: () => 1 }] }, 'needs exactly one of tool'],
    [{ fallbacks: [{ tool: { name: 'r' } }] }, 'fallbacks[0].tool is not a tool'],
    [{ fallbacks: [{ tool: answering('search') }] }, 'fallbacks[0].tool is the tool itself'],
    [{ fallbacks: [{ value: 'cached' }] }, 'fallbacks[0].value must be a function'],
    [{ fallbacks: [{ value: () => 1, on: ['tool.timout'] }] }, '"tool.timout" is neither an error code'],
    [{ fallbacks: [{ value: () => 1, on: [] }] }, 'on must be a non-empty array'],
    [{ fallbacks: [{ value: () => 1, reason: '' }] }, 'reason must be a non-empty string'],
    [{ fallbacks: [{ value: () => 1, when: () => true }] }, 'Unknown tool "search" fallbacks[0] option when'],
    [{ fallbacks: [{ tool: answering('r'), name: 'x' }] }, 'name is for value fallbacks'],
  ])('refuses %j', (extra, message) => {
    expect(() => tool({ ...base, ...extra })).toThrow(message);
  });

  it('refuses a fallback tool that needs approval: a fallback runs without asking', () => {
    const approved = tool({ ...answering('r'), input: queryInput, execute: () => 1, needsApproval: true });
    expect(() => tool({ ...base, fallbacks: [{ tool: approved }] })).toThrow('needs approval');
  });

  it('refuses a fallback tool that shares its name with another tool of the agent', () => {
    const listed = answering('search_replica');
    const impostor = answering('search_replica');
    const search = tool({ ...base, fallbacks: [{ tool: impostor }] });
    expect(() => agent({ model: scriptedModel([]), tools: [search, listed] })).toThrow(
      'falls back to a tool named "search_replica" that is not the agent\'s tool of that name',
    );
  });
});
