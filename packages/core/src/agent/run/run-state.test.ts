import { describe, expect, it } from 'vitest';
import { Emitter } from '../../policies/events.js';
import { retryBudget } from '../../policies/retry-budget.js';
import type { RunEvent } from '../../spec/run-events.js';
import { FakeClock } from '../../testing/fake-clock.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { agent } from '../agent.js';
import { runLoop } from '../loop/run-loop.js';
import { resolveAgent } from '../resolve-agent.js';
import { tool } from '../tools/tool.js';
import { RunAbort } from './cancellation.js';
import { RunEventSink } from './event-sink.js';
import { interruptionError } from './pending-decision.js';
import { RunContext } from './run-context.js';
import { idempotencyKeyOf, RUN_STATE_SCHEMA_VERSION, type RunState } from './run-state.js';
import { stopReasonOf } from './stop-reason.js';

const cityInput = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } as const;

function lookupTool(executed: string[]) {
  return tool({
    name: 'lookup',
    description: 'looks a city up',
    input: cityInput,
    execute: ({ city }: { city: string }) => {
      executed.push(city);
      return `${city}: sunny`;
    },
  });
}

const twoCalls = {
  toolCalls: [
    { name: 'lookup', arguments: { city: 'Paris' } },
    { name: 'lookup', arguments: { city: 'Rome' } },
  ],
};

describe('run state and checkpoints', () => {
  it('calls the checkpoint hook after every transition, with a JSON-serialisable state', async () => {
    const transitions: string[] = [];
    const saved: RunState[] = [];
    const model = scriptedModel([twoCalls, { content: 'Both sunny.' }]);
    const assistant = agent({
      model,
      tools: [lookupTool([])],
      limits: { maxParallelToolCalls: 1 },
      checkpoint: (transition, state) => {
        transitions.push(transition.kind);
        saved.push(JSON.parse(JSON.stringify(state)));
      },
    });
    const result = await assistant.run('Paris and Rome?', { runId: 'checkpointed' });

    expect(transitions).toEqual([
      'run-started',
      'model-response-received',
      'tool-call-started',
      'tool-call-completed',
      'tool-call-started',
      'tool-call-completed',
      'step-ended',
      'model-response-received',
      'run-ended',
    ]);
    expect(saved[0]).toMatchObject({
      schemaVersion: RUN_STATE_SCHEMA_VERSION,
      runId: 'checkpointed',
      status: 'running',
      phase: 'model',
      step: 0,
    });
    expect(saved[2]!.pendingToolCalls.map((call) => call.status)).toEqual(['started', 'pending']);
    expect(saved[3]!.pendingToolCalls[0]).toMatchObject({
      idempotencyKey: 'checkpointed:1:0',
      status: 'completed',
      result: { status: 'success', content: 'Paris: sunny' },
    });
    expect(saved.at(-1)).toEqual(JSON.parse(JSON.stringify(result.state)));
  });

  it('resumes from a checkpoint in the middle of a step without running a completed call again', async () => {
    const saved: RunState[] = [];
    const firstRun: string[] = [];
    await agent({
      model: scriptedModel([twoCalls, { content: 'unused' }]),
      tools: [lookupTool(firstRun)],
      limits: { maxParallelToolCalls: 1 },
      checkpoint: (transition, state) => {
        if (transition.kind === 'tool-call-completed' && transition.callIndex === 0)
          saved.push(JSON.parse(JSON.stringify(state)));
      },
    }).run('Paris and Rome?', { runId: 'crashed' });
    expect(firstRun).toEqual(['Paris', 'Rome']);

    // A new process: the same agent definition, the state restored from the checkpoint.
    const clock = new FakeClock();
    const resumed: string[] = [];
    const model = scriptedModel([{ content: 'Paris and Rome are sunny.' }]);
    const runtime = resolveAgent({ model, tools: [lookupTool(resumed)], clock });
    const state = saved[0]!;
    const abort = new RunAbort(state.runId, clock);
    const sink = new RunEventSink(new Emitter<RunEvent>(), undefined);
    const run = new RunContext(
      runtime,
      state,
      abort,
      sink,
      retryBudget({ maxRetries: 10, ratio: false, clock }),
      undefined,
    );
    const ending = await runLoop(run, false);
    run.dispose();

    expect(ending).toMatchObject({ status: 'completed', output: 'Paris and Rome are sunny.' });
    expect(resumed).toEqual(['Rome']);
    expect(
      model.calls[0]!.messages.filter((message) => message.role === 'tool').map((message) => message.content),
    ).toEqual([
      '{"status":"success","content":"Paris: sunny"}',
      '{"status":"success","content":"Rome: sunny"}',
    ]);
    expect(state.step).toBe(2);
    expect(state.report.toolCalls.total).toBe(2);
  });

  it('derives idempotency keys from run, step and position, and stop reasons from codes', () => {
    expect(idempotencyKeyOf('run-9', 3, 1)).toBe('run-9:3:1');
    expect(stopReasonOf('run.max_turns')).toBe('max_turns');
    expect(stopReasonOf('guardrail.output')).toBe('guardrail');
    expect(stopReasonOf('tool.failed')).toBe('tool_error');
    expect(stopReasonOf('provider.overloaded')).toBe('model_error');
    expect(stopReasonOf('internal.unexpected')).toBe('internal_error');
    expect(stopReasonOf('store.invalid')).toBe('internal_error');
  });

  it('tells a run waiting for approval from one waiting for a decision about a call that may have run', () => {
    const approval = interruptionError('r', [
      { kind: 'approval', idempotencyKey: 'r:1:0', toolName: 'mail', arguments: {}, step: 1, callIndex: 0 },
    ]);
    const uncertain = interruptionError('r', [
      { kind: 'approval', idempotencyKey: 'r:1:0', toolName: 'mail', arguments: {}, step: 1, callIndex: 0 },
      { kind: 'uncertain', idempotencyKey: 'r:1:1', toolName: 'pay', arguments: {}, step: 1, callIndex: 1 },
    ]);
    expect(stopReasonOf(approval)).toBe('approval_required');
    expect(stopReasonOf(uncertain)).toBe('decision_required');
    expect(stopReasonOf('run.interrupted')).toBe('approval_required');
  });

  it('turns a checkpoint that fails mid-run into a failed run, never a rejection', async () => {
    const model = scriptedModel([{ content: 'hello' }]);
    const result = await agent({
      model,
      checkpoint: (transition) => {
        if (transition.kind === 'model-response-received') throw new Error('disk full');
      },
    }).run('hi');
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('internal.unexpected');
    expect(result.error?.message).toContain('disk full');
  });
});
