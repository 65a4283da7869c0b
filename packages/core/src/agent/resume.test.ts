import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { JsonValue } from '../errors/keel-error.js';
import type { RunStatus } from '../spec/run-store.js';
import { MemoryRunStore } from '../store/memory-run-store.js';
import { DurableFixture } from '../testing/durable-fixture.js';
import { FakeClock } from '../testing/fake-clock.js';
import { type ScriptedStep, scriptedModel } from '../testing/scripted-model.js';
import { agent } from './agent.js';
import { RUN_STATE_SCHEMA_VERSION } from './run/run-state.js';
import { tool } from './tools/tool.js';

type FixtureName = 'midStep' | 'answerReceived' | 'approvalInterrupted' | 'completed';
const V1 = JSON.parse(
  readFileSync(new URL('./durability/fixtures/run-state-v1.json', import.meta.url), 'utf8'),
) as Record<FixtureName, { runId: string; status: RunStatus } & Record<string, JsonValue>>;

/** The agent the version-1 fixtures were captured with (the same name and tools), logging what its tools do. */
function v1Agent(store: MemoryRunStore, script: readonly ScriptedStep[]) {
  const executed: string[] = [];
  const cityInput = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } as const;
  const mailInput = { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] } as const;
  const model = scriptedModel(script);
  const assistant = agent({
    model,
    instructions: 'You are a weather assistant.',
    clock: new FakeClock(),
    store,
    tools: [
      tool({
        name: 'lookup',
        description: 'looks a city up',
        input: cityInput,
        idempotent: true,
        execute: ({ city }: { city: string }, context) => {
          executed.push(`${context.idempotencyKey}#${context.attempt}`);
          return `${city}: sunny`;
        },
      }),
      tool({
        name: 'send_mail',
        description: 'sends a mail',
        input: mailInput,
        needsApproval: true,
        execute: ({ to }: { to: string }, context) => {
          executed.push(`${context.idempotencyKey}#${context.attempt}`);
          return `sent to ${to}`;
        },
      }),
    ],
  });
  return { assistant, executed, model };
}

async function storeWith(
  name: FixtureName,
  overrides: Record<string, JsonValue> = {},
): Promise<MemoryRunStore> {
  const store = new MemoryRunStore();
  const state = { ...V1[name], ...overrides };
  await store.createRun({
    runId: V1[name].runId,
    agentName: 'agent',
    status: V1[name].status,
    schemaVersion: Number(state.schemaVersion),
    state,
    createdAtMs: 1_700_000_000_000,
  });
  return store;
}

describe('resume from version-2 checkpoints', () => {
  it('goes on in the middle of a step, re-running the idempotent call that had started, and counts no degradation', async () => {
    const v2 = JSON.parse(
      readFileSync(new URL('./durability/fixtures/run-state-v2.json', import.meta.url), 'utf8'),
    ) as Record<string, Record<string, JsonValue>>;
    const store = new MemoryRunStore();
    await store.createRun({
      runId: 'v2-mid-step',
      agentName: 'agent',
      status: 'running',
      schemaVersion: 2,
      state: v2.midStep!,
      createdAtMs: 1_700_000_000_000,
    });
    const { assistant, executed } = v1Agent(store, [{ content: 'Both sunny.' }]);
    const result = await assistant.resume('v2-mid-step');
    expect(result).toMatchObject({ status: 'completed', output: 'Both sunny.' });
    expect(executed).toEqual(['v2-mid-step:1:1#2']);
    expect(result.report.degradations).toEqual({ total: 0, byTool: {} });
    expect((await store.loadRun('v2-mid-step'))?.schemaVersion).toBe(RUN_STATE_SCHEMA_VERSION);
  });
});

describe('resume from version-1 checkpoints', () => {
  it('goes on in the middle of a step, running only the call not yet done', async () => {
    const store = await storeWith('midStep');
    const { assistant, executed, model } = v1Agent(store, [{ content: 'Both sunny.' }]);
    const result = await assistant.resume('v1-mid-step');
    expect(result).toMatchObject({ status: 'completed', output: 'Both sunny.' });
    expect(executed).toEqual(['v1-mid-step:1:1#1']);
    expect(model.calls).toHaveLength(1);
    expect(
      model.calls[0]!.messages.filter((message) => message.role === 'tool').map((message) => message.content),
    ).toEqual([
      '{"status":"success","content":"Paris: sunny"}',
      '{"status":"success","content":"Rome: sunny"}',
    ]);
    expect((await store.loadRun('v1-mid-step'))?.schemaVersion).toBe(RUN_STATE_SCHEMA_VERSION);
  });

  it('settles an answer that was received without asking the model again', async () => {
    const store = await storeWith('answerReceived');
    const { assistant, model } = v1Agent(store, []);
    const result = await assistant.resume('v1-answer');
    expect(result).toMatchObject({ status: 'completed', stopReason: 'final_answer', output: 'Hello there.' });
    expect(model.calls).toHaveLength(0);
    expect(result.usage).toEqual({ inputTokens: 12, outputTokens: 3 });
  });

  it('takes an approval for a run interrupted by version 1', async () => {
    const store = await storeWith('approvalInterrupted');
    const { assistant, executed, model } = v1Agent(store, [{ content: 'Mailed.' }]);
    const result = await assistant.resume('v1-approval', {
      approvals: { 'v1-approval:1:1': { approved: true } },
    });
    expect(result).toMatchObject({ status: 'completed', output: 'Mailed.' });
    // Version 1 did not keep the earlier call's result: being idempotent, it runs again with its key.
    expect(executed).toEqual(['v1-approval:1:0#2', 'v1-approval:1:1#1']);
    expect(model.calls).toHaveLength(1);
  });

  it('resolves a completed version-1 run with its stored result', async () => {
    const store = await storeWith('completed');
    const { assistant, model } = v1Agent(store, []);
    const result = await assistant.resume('v1-mid-step');
    expect(result).toMatchObject({ status: 'completed', output: 'Both sunny.', resumable: false });
    expect(result.report.toolCalls.total).toBe(2);
    expect(model.calls).toHaveLength(0);
  });

  it('refuses a state from a newer keel with config.invalid', async () => {
    const store = await storeWith('midStep', { schemaVersion: RUN_STATE_SCHEMA_VERSION + 1 });
    const { assistant, model } = v1Agent(store, []);
    await expect(assistant.resume('v1-mid-step')).rejects.toMatchObject({
      code: 'config.invalid',
      message: expect.stringContaining('upgrade keel'),
    });
    expect(model.calls).toHaveLength(0);
  });
});

describe('resume arguments', () => {
  it('refuses bad arguments with config.invalid before anything runs', async () => {
    const store = new MemoryRunStore();
    const fixture = new DurableFixture();
    fixture.script = [
      { toolCalls: [{ name: 'send_mail', arguments: { to: 'x@elsewhere.org' } }] },
      { content: 'ok' },
    ];
    const assistant = fixture.agent(store, { owner: 'me' });
    await assistant.run('mail', { runId: 'waiting' });
    const cases: Array<[unknown, unknown, RegExp]> = [
      ['', {}, /runId must be/],
      ['waiting', { runId: 'x' }, /unknown option "runId"/],
      ['waiting', { approvals: [] }, /approvals must be an object/],
      ['waiting', { approvals: { 'waiting:1:0': { ok: true } } }, /must be \{ approved: true \}/],
      ['waiting', { decisions: { 'waiting:1:0': 'maybe' } }, /must be 'execute' or 'abandon'/],
      [
        'waiting',
        { approvals: { 'waiting:9:9': { approved: true } } },
        /does not wait for .*pending: waiting:1:0/,
      ],
      [
        'waiting',
        { decisions: { 'waiting:1:0': 'execute' } },
        /does not wait for \(nothing of that kind is pending\)/,
      ],
    ];
    for (const [runId, options, message] of cases) {
      await expect(
        assistant.resume(runId as string, options as never),
        String(message),
      ).rejects.toMatchObject({
        code: 'config.invalid',
        message: expect.stringMatching(message),
      });
    }
    expect((await store.loadRun('waiting'))?.status).toBe('interrupted');
    // A refused resume let its lease go: another process can take the run at once.
    expect((await store.acquireLease('waiting', 'other', 1_000, Date.now())).owner).toBe('other');
    await store.releaseLease('waiting', 'other');
    expect(fixture.executions).toEqual([]);
    expect(fixture.requestsByStep).toEqual([1]);
  });

  it("reports an unknown run as store.not_found, and another agent's run as config.invalid", async () => {
    const store = new MemoryRunStore();
    const fixture = new DurableFixture();
    await fixture.agent(store, { owner: 'me' }).run('Pay twice', { runId: 'mine' });
    await expect(fixture.agent(store, { owner: 'me' }).resume('nobody')).rejects.toMatchObject({
      code: 'store.not_found',
    });
    const other = agent({ name: 'other', model: scriptedModel([]), store });
    await expect(other.resume('mine')).rejects.toMatchObject({
      code: 'config.invalid',
      message: expect.stringContaining('belongs to agent "durable-fixture"'),
    });
  });
});
