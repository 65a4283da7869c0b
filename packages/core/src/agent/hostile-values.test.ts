import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { isErrorCode } from '../errors/codes.js';
import { KeelError } from '../errors/keel-error.js';
import { constant } from '../policies/delays.js';
import type { ModelProvider, ModelRequest } from '../spec/model.js';
import type { RunStore } from '../spec/run-store.js';
import { MemoryRunStore } from '../store/memory-run-store.js';
import { FakeClock, flushMicrotasks } from '../testing/fake-clock.js';
import { HOSTILE_VALUES } from '../testing/hostile-values.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { type Agent, agent } from './agent.js';
import type { AgentOptions } from './agent-options.js';
import { guardrail } from './guardrails/guardrail.js';
import type { RunOptions, RunResult } from './loop/run.js';
import type { TerminalStatus } from './run/stop-reason.js';
import { tool } from './tools/tool.js';

// A provider, tool, guardrail, callback or store that throws (or rejects with) a hostile value must never hang a
// run nor cause an unhandled rejection: the run ends in a typed terminal state, its error a KeelError made here.

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => {
  process.on('unhandledRejection', onUnhandled);
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
});
afterEach(async () => {
  await flushMicrotasks();
  const count = unhandled.length;
  unhandled.length = 0;
  expect(count, 'unhandled rejections').toBe(0);
  vi.restoreAllMocks();
});

const lookup = (execute: () => unknown, needsApproval?: () => boolean) =>
  tool({
    name: 'lookup',
    description: 'Looks a key up',
    input: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
    idempotent: true,
    ...(needsApproval === undefined ? {} : { needsApproval }),
    execute,
  });

/** A model that calls `lookup` once, then answers. */
const callsLookupThenAnswers = () =>
  scriptedModel([
    { toolCalls: [{ name: 'lookup', arguments: { key: 'k' } }] },
    { content: 'done', textDeltas: ['do', 'ne'] },
  ]);

/** A store whose `method` always fails with `value`, rejecting (or throwing, when `synchronous`). */
/** Methods a durable run calls only on a store without `commitStep`. */
const SEPARATE_CALLS: readonly (keyof RunStore)[] = [
  'saveCheckpoint',
  'recordToolStarted',
  'recordToolCompleted',
];

function failingStore(method: keyof RunStore, value: () => unknown, synchronous = false): RunStore {
  const inner = new MemoryRunStore();
  return new Proxy(inner, {
    get(target, key, receiver) {
      // The separate calls are made by a store without commitStep; acquireLease by one whose createRun ignores `lease`.
      if (key === 'commitStep' && SEPARATE_CALLS.includes(method)) return undefined;
      if (key === 'createRun' && method === 'acquireLease') {
        return (run: Parameters<RunStore['createRun']>[0]) => target.createRun({ ...run, lease: undefined });
      }
      if (key !== method) {
        const property = Reflect.get(target, key, receiver);
        return typeof property === 'function' ? property.bind(target) : property;
      }
      return () => {
        if (synchronous) throw value();
        return Promise.reject(value());
      };
    },
  });
}

interface Place {
  readonly name: string;
  /** The agent's options, and the run's, with `value` thrown from the place. */
  readonly setup: (value: () => unknown) => {
    agent: Omit<AgentOptions, 'clock'>;
    run?: RunOptions;
    /** Called once the run started (to cancel it, say). */
    started?: (assistant: Agent, runId: string) => void;
  };
  readonly status: TerminalStatus;
  readonly check?: (result: RunResult) => void;
}

const toolMessage = (result: RunResult) => result.messages.find((message) => message.role === 'tool');

const PLACES: readonly Place[] = [
  {
    name: 'model generate (rejects)',
    setup: (value) => ({
      agent: {
        model: {
          provider: 'hostile',
          model: 'm',
          generate: async () => {
            throw value();
          },
        },
      },
    }),
    status: 'failed',
  },
  {
    name: 'model generate (throws synchronously)',
    setup: (value) => ({
      agent: {
        model: {
          provider: 'hostile',
          model: 'm',
          generate: () => {
            throw value();
          },
        } as ModelProvider,
      },
    }),
    status: 'failed',
  },
  {
    name: 'model generate (resolves with it)',
    setup: (value) => ({
      agent: {
        model: { provider: 'hostile', model: 'm', generate: async () => value() } as ModelProvider,
      },
    }),
    status: 'failed',
  },
  {
    name: 'model stream (after a delta)',
    setup: (value) => ({
      agent: {
        model: {
          provider: 'hostile',
          model: 'm',
          generate: async (request: ModelRequest) => {
            request.onTextDelta?.('Hel');
            throw value();
          },
        },
      },
      run: { onTextDelta: () => undefined },
    }),
    status: 'failed',
    check: (result) => expect(result.error?.data.partialOutput).toBe('Hel'),
  },
  {
    name: 'the caller’s onTextDelta',
    setup: (value) => ({
      agent: { model: callsLookupThenAnswers(), tools: [lookup(() => 'v')] },
      run: {
        onTextDelta: () => {
          throw value();
        },
      },
    }),
    status: 'completed',
  },
  {
    name: 'the caller’s onEvent',
    setup: (value) => ({
      agent: { model: callsLookupThenAnswers(), tools: [lookup(() => 'v')] },
      run: {
        onEvent: () => {
          throw value();
        },
      },
    }),
    status: 'completed',
  },
  {
    name: 'an agent event subscriber',
    setup: (value) => ({
      agent: {
        model: callsLookupThenAnswers(),
        tools: [lookup(() => 'v')],
        onEvent: () => {
          throw value();
        },
      },
    }),
    status: 'completed',
  },
  {
    name: 'tool execute (rejects)',
    setup: (value) => ({
      agent: {
        model: callsLookupThenAnswers(),
        tools: [
          lookup(async () => {
            throw value();
          }),
        ],
      },
    }),
    status: 'completed',
    check: (result) => expect(toolMessage(result)?.content).toMatch(/^\{"status":"error","error":\{"code":"/),
  },
  {
    name: 'tool execute (throws synchronously)',
    setup: (value) => ({
      agent: {
        model: callsLookupThenAnswers(),
        tools: [
          lookup(() => {
            throw value();
          }),
        ],
      },
    }),
    status: 'completed',
    check: (result) => expect(toolMessage(result)?.content).toMatch(/^\{"status":"error","error":\{"code":"/),
  },
  {
    name: 'tool execute (resolves with it)',
    setup: (value) => ({
      agent: { model: callsLookupThenAnswers(), tools: [lookup(async () => value())] },
    }),
    status: 'completed',
  },
  {
    name: 'tool needsApproval',
    setup: (value) => ({
      agent: {
        model: callsLookupThenAnswers(),
        tools: [
          lookup(
            () => 'v',
            () => {
              throw value();
            },
          ),
        ],
      },
    }),
    status: 'completed',
    check: (result) => expect(toolMessage(result)?.content).toMatch(/^\{"status":"error","error":\{"code":"/),
  },
  {
    name: 'input guardrail',
    setup: (value) => ({
      agent: {
        model: callsLookupThenAnswers(),
        guardrails: [
          guardrail({
            name: 'hostile',
            stage: 'input',
            check: () => {
              throw value();
            },
          }),
        ],
      },
    }),
    status: 'failed',
    check: (result) => expect(result.error?.code).toBe('guardrail.input'),
  },
  {
    name: 'output guardrail',
    setup: (value) => ({
      agent: {
        model: scriptedModel([{ content: 'done' }]),
        guardrails: [
          guardrail({
            name: 'hostile',
            stage: 'output',
            check: async () => {
              throw value();
            },
          }),
        ],
      },
    }),
    status: 'failed',
    check: (result) => expect(result.error?.code).toBe('guardrail.output'),
  },
  {
    name: 'tool-call guardrail',
    setup: (value) => ({
      agent: {
        model: callsLookupThenAnswers(),
        tools: [lookup(() => 'v')],
        guardrails: [
          guardrail({
            name: 'hostile',
            stage: 'tool-call',
            check: () => {
              throw value();
            },
          }),
        ],
      },
    }),
    status: 'completed',
    check: (result) => expect(toolMessage(result)?.content).toContain('"code":"tool.permission_denied"'),
  },
  {
    name: 'conversation manager',
    setup: (value) => ({
      agent: {
        model: scriptedModel([new KeelError('provider.context_overflow', 'too long')]),
        conversationManager: {
          name: 'hostile',
          reduce: async () => {
            throw value();
          },
        },
      },
    }),
    status: 'failed',
  },
  {
    name: 'checkpoint hook',
    setup: (value) => ({
      agent: {
        model: callsLookupThenAnswers(),
        tools: [lookup(() => 'v')],
        checkpoint: async () => {
          throw value();
        },
      },
    }),
    status: 'failed',
  },
  {
    name: 'the caller’s signal (aborted before the run)',
    setup: (value) => {
      const controller = new AbortController();
      controller.abort(value());
      return { agent: { model: callsLookupThenAnswers() }, run: { signal: controller.signal } };
    },
    status: 'cancelled',
    check: (result) => expect(result.error?.code).toBe('run.cancelled'),
  },
  {
    name: 'the caller’s signal (aborted during a tool call)',
    setup: (value) => {
      const controller = new AbortController();
      return {
        agent: {
          model: callsLookupThenAnswers(),
          tools: [
            lookup(() => {
              controller.abort(value());
              return new Promise(() => undefined);
            }),
          ],
        },
        run: { signal: controller.signal },
      };
    },
    status: 'cancelled',
    check: (result) => expect(result.error?.code).toBe('run.cancelled'),
  },
  {
    name: 'agent.cancel’s reason',
    setup: (value) => ({
      agent: { model: callsLookupThenAnswers(), tools: [lookup(() => new Promise(() => undefined))] },
      started: (assistant, runId) => {
        setImmediate(() => assistant.cancel(runId, value() as string));
      },
    }),
    status: 'cancelled',
    check: (result) => expect(result.error?.code).toBe('run.cancelled'),
  },
  ...(
    [
      ['createRun', 'failed'],
      ['acquireLease', 'interrupted'],
      ['saveCheckpoint', 'interrupted'],
      ['recordToolStarted', 'interrupted'],
      ['recordToolCompleted', 'interrupted'],
      ['commitStep', 'interrupted'],
      ['releaseLease', 'completed'],
    ] as const
  ).flatMap(([method, status]) =>
    [false, true].map(
      (synchronous): Place => ({
        name: `store ${method} (${synchronous ? 'throws synchronously' : 'rejects'})`,
        setup: (value) => ({
          agent: {
            model: callsLookupThenAnswers(),
            tools: [lookup(() => 'v')],
            store: failingStore(method, value, synchronous),
          },
        }),
        status,
      }),
    ),
  ),
];

/**
 * Resolves with the run's result if it settles within 60 s of fake time. Its own timeout is an hour and its calls'
 * ten minutes, so a run that needs either to end is a run that hangs.
 */
async function settle(pending: Promise<RunResult>, clock: FakeClock): Promise<RunResult> {
  let settled = false;
  const observed = pending.then(
    (result) => {
      settled = true;
      return result;
    },
    (error: unknown) => {
      settled = true;
      throw error;
    },
  );
  for (let second = 0; second < 60 && !settled; second++) await clock.advance(1_000);
  if (!settled) throw new Error('the run did not settle: it hangs');
  return observed;
}

describe.each(HOSTILE_VALUES)('$name', ({ make }) => {
  it.each(PLACES)('thrown from $name ends the run in a typed state', async (place) => {
    vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const clock = new FakeClock();
    const { agent: options, run: runOptions, started } = place.setup(make);
    const assistant = agent({
      ...options,
      clock,
      limits: { timeoutMs: 3_600_000 },
      modelTimeoutMs: 600_000,
      toolTimeoutMs: 600_000,
      retry: { delay: constant(10) },
    } as AgentOptions);
    const runId = 'hostile-run';
    const pending = assistant.run('go', { ...runOptions, runId });
    started?.(assistant, runId);

    const result = await settle(pending, clock);

    expect(result.status).toBe(place.status);
    if (result.status !== 'completed') {
      const error = result.error;
      expect(error).toBeInstanceOf(KeelError);
      expect(isErrorCode(error?.code)).toBe(true);
      expect(typeof error?.message).toBe('string');
      // It can be logged and stored.
      expect(typeof inspect(error)).toBe('string');
      expect(JSON.parse(JSON.stringify(error))).toMatchObject({ code: error?.code });
      expect(result.report.errors.total).toBeGreaterThan(0);
    }
    // The state is plain data all through: it can be checkpointed.
    expect(JSON.parse(JSON.stringify(result.state))).toEqual(result.state);
    place.check?.(result);
  });
});
