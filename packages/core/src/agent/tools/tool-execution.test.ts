import { describe, expect, it } from 'vitest';
import { KeelError } from '../../errors/keel-error.js';
import { consecutive } from '../../policies/breaker/consecutive.js';
import { constant } from '../../policies/delays.js';
import type { Message } from '../../spec/model.js';
import type { RunEvent } from '../../spec/run-events.js';
import type { ToolContext } from '../../spec/tool.js';
import { FakeClock } from '../../testing/fake-clock.js';
import { type ScriptedStep, scriptedModel } from '../../testing/scripted-model.js';
import { type Agent, agent } from '../agent.js';
import type { AgentOptions } from '../agent-options.js';
import type { RunResult } from '../loop/run.js';
import { retryStep, stopRun } from '../run/directives.js';
import { tool } from './tool.js';

const emptyInput = { type: 'object', properties: {}, additionalProperties: false } as const;
const numberInput = {
  type: 'object',
  properties: { value: { type: 'number' } },
  required: ['value'],
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

/** The parsed content of the tool messages a request carried. */
function toolResults(messages: readonly Message[]): unknown[] {
  return messages.filter((message) => message.role === 'tool').map((message) => JSON.parse(message.content));
}

describe('tool execution: failures are data', () => {
  it('times a hung tool out with tool.timeout, tells its signal, and shows the error to the model', async () => {
    const clock = new FakeClock();
    const signals: AbortSignal[] = [];
    const slow = tool({
      name: 'slow',
      description: 'never answers',
      input: emptyInput,
      timeoutMs: 1_000,
      execute: (_input, context) => {
        signals.push(context.signal);
        return new Promise(() => {});
      },
    });
    const { model, assistant } = build(
      clock,
      [{ toolCalls: [{ name: 'slow' }] }, { content: 'gave up on it' }],
      { tools: [slow] },
    );
    const result = await runOnClock(clock, assistant);

    expect(result.status).toBe('completed');
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(true);
    // Not idempotent: the call may have taken effect before it was cut, so its outcome is unknown.
    expect(toolResults(model.calls[1]!.messages)).toEqual([
      {
        status: 'error',
        error: {
          code: 'tool.outcome_unknown',
          message:
            'The call to "slow" failed with tool.timeout after it may have taken effect: its outcome is unknown',
          retryable: false,
          data: { toolName: 'slow', outcome: 'unknown', errorCode: 'tool.timeout' },
        },
        guidance:
          'The call may or may not have taken effect. Do not call it again with the same arguments: it could happen twice. Check its effect another way, or tell the user the outcome is unknown.',
      },
    ]);
    expect(model.calls[1]!.messages.at(-1)).toMatchObject({ role: 'tool', isError: true });
    // Not idempotent: a call that may have run is not run again.
    expect(result.report.retries.tool).toBe(0);
    expect(result.report.toolCalls).toEqual({
      total: 1,
      errors: 1,
      byTool: { slow: 1 },
      errorsByCode: { 'tool.outcome_unknown': 1 },
    });
    // The run's errors count the failure itself; the report counts the call whose outcome is unknown.
    expect(result.report.errors.byCode).toEqual({ 'tool.timeout': 1 });
    expect(result.report.uncertainCalls).toEqual({
      total: 1,
      byTool: { slow: 1 },
      reconciled: 0,
      blocked: 0,
    });
  });

  it('classifies a thrown plain error as tool.failed', async () => {
    const clock = new FakeClock();
    const broken = tool({
      name: 'broken',
      description: 'throws',
      input: emptyInput,
      execute: () => {
        throw new Error('disk on fire');
      },
    });
    const { model, assistant } = build(clock, [{ toolCalls: [{ name: 'broken' }] }, { content: 'sorry' }], {
      tools: [broken],
    });
    const result = await runOnClock(clock, assistant);
    expect(result.status).toBe('completed');
    expect(toolResults(model.calls[1]!.messages)).toMatchObject([
      { status: 'error', error: { code: 'tool.failed', message: 'Tool "broken" failed: disk on fire' } },
    ]);
  });

  it('retries an idempotent tool, with the same idempotency key and a rising attempt', async () => {
    const clock = new FakeClock();
    const contexts: ToolContext[] = [];
    const flaky = tool({
      name: 'flaky',
      description: 'fails twice',
      input: emptyInput,
      idempotent: true,
      execute: (_input, context) => {
        contexts.push(context);
        if (contexts.length < 3) throw new KeelError('tool.timeout', 'upstream slow');
        return 'ok';
      },
    });
    const events: RunEvent[] = [];
    const { assistant } = build(clock, [{ toolCalls: [{ name: 'flaky' }] }, { content: 'done' }], {
      tools: [flaky],
    });
    const result = await runOnClock(clock, assistant, events);

    expect(contexts.map((context) => context.attempt)).toEqual([1, 2, 3]);
    expect(new Set(contexts.map((context) => context.idempotencyKey))).toEqual(
      new Set([`${result.runId}:1:0`]),
    );
    expect(result.report.retries).toEqual({ total: 2, model: 0, tool: 2, store: 0 });
    expect(result.report.waitingMs).toBe(200);
    expect(result.report.toolCalls.errors).toBe(0);
    expect(events.filter((event) => event.type === 'retry-scheduled')).toMatchObject([
      { target: 'tool', name: 'flaky', attempt: 1 },
      { target: 'tool', name: 'flaky', attempt: 2 },
    ]);
  });

  it('retries a tool with side effects only when the failure proves nothing ran', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const payment = tool({
      name: 'pay',
      description: 'charges a card',
      input: emptyInput,
      execute: () => {
        calls++;
        if (calls === 1) throw new KeelError('tool.unavailable', 'payment service not ready');
        if (calls === 2) throw new KeelError('network.timeout', 'no answer');
        return 'charged';
      },
    });
    const { model, assistant } = build(clock, [{ toolCalls: [{ name: 'pay' }] }, { content: 'done' }], {
      tools: [payment],
    });
    const result = await runOnClock(clock, assistant);
    expect(calls).toBe(2);
    // The timeout may have charged the card: the model is told the outcome is unknown, not that it may retry.
    expect(toolResults(model.calls[1]!.messages)).toMatchObject([
      {
        status: 'error',
        error: { code: 'tool.outcome_unknown', retryable: false, data: { errorCode: 'network.timeout' } },
      },
    ]);
    expect(result.report.retries.tool).toBe(1);
  });

  it('keeps a breaker per tool across runs and turns calls away while it is open', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const down = tool({
      name: 'down',
      description: 'always fails',
      input: emptyInput,
      execute: () => {
        calls++;
        throw new KeelError('tool.failed', 'backend down');
      },
    });
    const script: ScriptedStep[] = [];
    for (let index = 0; index < 3; index++) script.push({ toolCalls: [{ name: 'down' }] }, { content: 'ok' });
    const { model, assistant } = build(clock, script, {
      tools: [down],
      toolBreaker: { strategy: consecutive({ threshold: 2 }), halfOpenAfterMs: 60_000 },
    });
    await runOnClock(clock, assistant);
    const second = await runOnClock(clock, assistant);
    const third = await runOnClock(clock, assistant);
    expect(calls).toBe(2);
    expect(second.report.breakerTransitions).toMatchObject([{ target: 'tool', name: 'down', to: 'open' }]);
    expect(toolResults(model.calls[5]!.messages).at(-1)).toMatchObject({
      status: 'error',
      error: { code: 'policy.circuit_open' },
    });
    expect(third.report.toolCalls.errorsByCode).toEqual({ 'policy.circuit_open': 1 });
  });
});

describe('tool execution: parallel calls', () => {
  it('runs at most maxParallelToolCalls at once and returns results in the model order', async () => {
    const clock = new FakeClock();
    let running = 0;
    let mostRunning = 0;
    const sleepy = tool({
      name: 'sleepy',
      description: 'waits value ms',
      input: numberInput,
      idempotent: true,
      execute: async ({ value }: { value: number }) => {
        running++;
        mostRunning = Math.max(mostRunning, running);
        await new Promise<void>((resolve) => clock.setTimeout(resolve, value));
        running--;
        return value;
      },
    });
    const delays = [50, 10, 40, 20, 30];
    const { model, assistant } = build(
      clock,
      [{ toolCalls: delays.map((value) => ({ name: 'sleepy', arguments: { value } })) }, { content: 'done' }],
      { tools: [sleepy], limits: { maxParallelToolCalls: 2 } },
    );
    const result = await runOnClock(clock, assistant);
    expect(result.status).toBe('completed');
    expect(mostRunning).toBe(2);
    expect(toolResults(model.calls[1]!.messages)).toEqual(
      delays.map((value) => ({ status: 'success', content: value })),
    );
    expect(
      model.calls[1]!.messages.filter((message) => message.role === 'tool').map(
        (message) => (message as { toolCallId: string }).toolCallId,
      ),
    ).toEqual(['call_0_0', 'call_0_1', 'call_0_2', 'call_0_3', 'call_0_4']);
  });
});

describe('tool execution: self-correction', () => {
  const add = tool({
    name: 'add_one',
    description: 'adds one',
    input: numberInput,
    execute: ({ value }: { value: number }) => value + 1,
  });

  it('sends guidance for an unknown tool, malformed JSON and invalid arguments, then runs the corrected call', async () => {
    const clock = new FakeClock();
    const events: RunEvent[] = [];
    const { model, assistant } = build(
      clock,
      [
        { toolCalls: [{ name: 'add_on', arguments: { value: 1 } }] },
        { toolCalls: [{ name: 'add_one', arguments: '{"value": 1,' }] },
        { toolCalls: [{ name: 'add_one', arguments: { value: 'one' } }] },
        { toolCalls: [{ name: 'add_one', arguments: { value: 1 } }] },
        { content: '2' },
      ],
      { tools: [add] },
    );
    const result = await runOnClock(clock, assistant, events);

    expect(result.status).toBe('completed');
    const [unknown] = toolResults(model.calls[1]!.messages).slice(-1) as {
      guidance: string;
      error: { code: string };
    }[];
    expect(unknown!.error.code).toBe('tool.not_found');
    expect(unknown!.guidance).toContain('Did you mean "add_one"?');
    const [malformed] = toolResults(model.calls[2]!.messages).slice(-1) as {
      guidance: string;
      error: { code: string };
    }[];
    expect(malformed!.error.code).toBe('tool.invalid_input');
    expect(malformed!.guidance).toContain('not valid JSON');
    const [invalid] = toolResults(model.calls[3]!.messages).slice(-1) as { guidance: string }[];
    expect(invalid!.guidance).toContain('$.value');
    expect(toolResults(model.calls[4]!.messages).at(-1)).toEqual({ status: 'success', content: 2 });
    expect(result.report.corrections).toEqual({
      total: 3,
      byKind: { unknown_tool: 1, malformed_json: 1, invalid_arguments: 1 },
    });
    expect(result.report.toolCalls.total).toBe(1);
    expect(
      events.filter((event) => event.type === 'correction').map((event) => (event as { kind: string }).kind),
    ).toEqual(['unknown_tool', 'malformed_json', 'invalid_arguments']);
    expect(result.state.corrections?.invalidInRun).toBe(3);
  });

  it('ends with run.no_progress when the model repeats the same invalid call', async () => {
    const clock = new FakeClock();
    const same = { toolCalls: [{ name: 'add_one', arguments: { value: 'one' } }] };
    const { model, assistant } = build(clock, [same, same, same, { content: 'never' }], { tools: [add] });
    const result = await runOnClock(clock, assistant);

    expect(result.status).toBe('failed');
    expect(result.stopReason).toBe('no_progress');
    expect(result.error?.code).toBe('run.no_progress');
    expect(result.error?.data).toMatchObject({ reason: 'repeated_invalid_call', target: 'add_one' });
    expect(model.calls).toHaveLength(2);
    expect(result.report.errors.byCode).toEqual({ 'tool.invalid_input': 2, 'run.no_progress': 1 });
  });
});

describe('tool execution: directives pass through every policy', () => {
  it('honours stopRun thrown by an idempotent tool behind retry, breaker and timeout', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const finish = tool({
      name: 'finish',
      description: 'ends the run',
      input: emptyInput,
      idempotent: true,
      timeoutMs: 5_000,
      execute: () => {
        calls++;
        throw stopRun('order placed', { orderId: 7 });
      },
    });
    const { model, assistant } = build(
      clock,
      [{ toolCalls: [{ name: 'finish' }] }, { content: 'not asked' }],
      {
        tools: [finish],
        toolBreaker: { strategy: consecutive({ threshold: 1 }) },
      },
    );
    const result = await runOnClock(clock, assistant);

    expect(result.status).toBe('completed');
    expect(result.stopReason).toBe('stop_requested');
    expect(result.stopDetail).toBe('order placed');
    expect(result.output).toEqual({ orderId: 7 });
    expect(calls).toBe(1);
    expect(model.calls).toHaveLength(1);
    expect(result.report.retries.total).toBe(0);
    expect(result.report.errors.total).toBe(0);
    expect(assistant.breakers.get('tool:finish')?.state).toBe('closed');
  });

  it('honours a returned stopRun, and stops the calls not yet started', async () => {
    const clock = new FakeClock();
    const ran: string[] = [];
    const finish = tool({
      name: 'finish',
      description: 'ends',
      input: emptyInput,
      execute: () => stopRun('enough'),
    });
    const other = tool({
      name: 'other',
      description: 'other',
      input: emptyInput,
      execute: () => ran.push('other'),
    });
    const { assistant } = build(clock, [{ toolCalls: [{ name: 'finish' }, { name: 'other' }] }], {
      tools: [finish, other],
      limits: { maxParallelToolCalls: 1 },
    });
    const result = await runOnClock(clock, assistant);
    expect(result.stopReason).toBe('stop_requested');
    expect(result.output).toBeUndefined();
    expect(ran).toEqual([]);
  });

  it('turns retryStep into guidance for the model, never a retry of the tool', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const search = tool({
      name: 'search',
      description: 'searches',
      input: emptyInput,
      idempotent: true,
      execute: () => {
        calls++;
        throw retryStep('The query is too short: ask for a longer one.');
      },
    });
    const { model, assistant } = build(
      clock,
      [{ toolCalls: [{ name: 'search' }] }, { content: 'asked the user' }],
      { tools: [search] },
    );
    const result = await runOnClock(clock, assistant);
    expect(result.status).toBe('completed');
    expect(calls).toBe(1);
    expect(toolResults(model.calls[1]!.messages)).toMatchObject([
      { status: 'error', guidance: 'The query is too short: ask for a longer one.' },
    ]);
    expect(result.report.corrections.byKind).toEqual({ retry_step: 1 });
    expect(result.report.retries.total).toBe(0);
    // A directive is a control signal, not a failure.
    expect(result.report.toolCalls.errors).toBe(0);
    expect(result.report.errors.total).toBe(0);
  });

  it('interrupts the run before a tool that needs approval', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const wire = tool({
      name: 'wire',
      description: 'moves money',
      input: emptyInput,
      needsApproval: true,
      execute: () => calls++,
    });
    const { assistant } = build(clock, [{ toolCalls: [{ name: 'wire' }] }], { tools: [wire] });
    const result = await runOnClock(clock, assistant);
    expect(result.status).toBe('interrupted');
    expect(result.stopReason).toBe('approval_required');
    expect(result.error?.code).toBe('run.interrupted');
    expect(result.error?.data).toMatchObject({ toolName: 'wire', idempotencyKey: `${result.runId}:1:0` });
    expect(calls).toBe(0);
  });

  it("turns a tool's progress reports into tool-call-progress events while the call runs", async () => {
    const clock = new FakeClock();
    const contexts: ToolContext[] = [];
    const job = tool({
      name: 'job',
      description: 'a long job',
      input: emptyInput,
      execute: (_input, context) => {
        contexts.push(context);
        context.reportProgress?.({ progress: 1, total: 2 });
        context.reportProgress?.({ progress: 2, total: 2, message: 'done' });
        return 'ok';
      },
    });
    const script = [{ toolCalls: [{ name: 'job' }] }, { content: 'finished' }];
    const events: RunEvent[] = [];
    const result = await runOnClock(clock, build(clock, script, { tools: [job] }).assistant, events);
    expect(result.status).toBe('completed');
    const key = `${result.runId}:1:0`;
    expect(events.filter((event) => event.type === 'tool-call-progress')).toEqual([
      {
        type: 'tool-call-progress',
        runId: result.runId,
        atMs: expect.any(Number),
        step: 1,
        callIndex: 0,
        toolName: 'job',
        idempotencyKey: key,
        progress: 1,
        total: 2,
      },
      {
        type: 'tool-call-progress',
        runId: result.runId,
        atMs: expect.any(Number),
        step: 1,
        callIndex: 0,
        toolName: 'job',
        idempotencyKey: key,
        progress: 2,
        total: 2,
        message: 'done',
      },
    ]);
    // A report after the call has ended is ignored.
    contexts[0]?.reportProgress?.({ progress: 3 });
    expect(events.filter((event) => event.type === 'tool-call-progress')).toHaveLength(2);

    // Nobody listening: the tool is not offered the hook, so it need not ask its backend for progress.
    const quiet = build(clock, script, { tools: [job] }).assistant;
    let done = false;
    const pending = quiet.run('go').finally(() => {
      done = true;
    });
    while (!done) await clock.advance(10);
    await pending;
    expect(contexts[1]?.reportProgress).toBeUndefined();
  });
});
