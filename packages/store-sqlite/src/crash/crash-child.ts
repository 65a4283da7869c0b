// The child process of the crash test (crash.test.ts): runs or resumes one durable run against a SQLite store, with
// tools whose side effect is a line appended to a file, and reports on stdout, one JSON object a line, so that the
// test can choose when to SIGKILL it. A test fixture compiled with the package, not part of its API.
//
//   node crash-child.js <database> <effects file> run|resume <runId> [ChildSettings as JSON]
//
// Exit codes: 0 with a `result` line; EXIT_RUN_NOT_FOUND and EXIT_CONFLICT with an `error` line carrying the code;
// 1 for anything else.
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  agent,
  agentTool,
  KeelError,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  tool,
} from '@keel/core';
import { SqliteRunStore } from '../sqlite-run-store.js';
import {
  type ChildSettings,
  CRASH_TOOLS,
  type CrashPlan,
  crashPlan,
  DELEGATE_TOOL,
  delegateRunId,
  EXIT_CONFLICT,
  EXIT_RUN_NOT_FOUND,
  effectLine,
} from './crash-plan.js';
import { seedOf } from './prng.js';

function report(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

/** A few real milliseconds, fixed by the text, so that a kill can land inside a model or tool call. */
function pauseMs(text: string, min: number, max: number): number {
  return min + (seedOf(text) % (max - min + 1));
}

/**
 * Plays the model: a function of the conversation alone, so a resumed run that asks again gets the same answer. With
 * `delegate`, step 1 also calls the agent tool.
 */
function planModel(plan: CrashPlan, delegate = false): ModelProvider {
  return {
    provider: 'crash',
    model: 'plan',
    async generate(request: ModelRequest): Promise<ModelResponse> {
      const step = request.messages.filter((message) => message.role === 'assistant').length + 1;
      await sleep(pauseMs(`${plan.runId}/model/${step}`, 0, 2));
      const usage = { inputTokens: 10, outputTokens: 5 };
      const calls = plan.steps[step - 1];
      if (calls !== undefined) {
        const toolCalls = calls.map((call) => ({
          id: call.callId,
          name: call.toolName,
          arguments: JSON.stringify({ note: call.callId }),
        }));
        if (delegate && step === 1)
          toolCalls.push({
            id: 'call_delegate',
            name: DELEGATE_TOOL,
            arguments: '{"prompt":"Carry out your plan."}',
          });
        return {
          content: '',
          toolCalls,
          finishReason: 'tool_calls',
          usage,
          model: 'plan',
        };
      }
      const seen = request.messages.flatMap((message) =>
        message.role === 'tool' ? [`${message.toolCallId}=${message.isError === true ? 'error' : 'ok'}`] : [],
      );
      return {
        content: `done: ${seen.join(' ')}`,
        toolCalls: [],
        finishReason: 'stop',
        usage,
        model: 'plan',
      };
    },
  };
}

function crashTools(effectsPath: string) {
  return CRASH_TOOLS.map((spec) =>
    tool<{ note: string }, { key: string; tool: string; attempt: number }>({
      name: spec.name,
      description: `Crash test tool: appends its idempotency key to the side-effect file (${spec.idempotent ? 'idempotent' : 'not idempotent'})`,
      input: {
        type: 'object',
        properties: { note: { type: 'string' } },
        required: ['note'],
        additionalProperties: false,
      },
      idempotent: spec.idempotent,
      timeoutMs: 30_000,
      async execute(_input, context) {
        const key = context.idempotencyKey;
        await sleep(pauseMs(`${key}/before`, 0, 2));
        appendFileSync(effectsPath, effectLine(key, spec.name, spec.idempotent));
        report({ type: 'effect', key, tool: spec.name, attempt: context.attempt });
        await sleep(pauseMs(`${key}/after`, 1, 3));
        return { key, tool: spec.name, attempt: context.attempt };
      },
    }),
  );
}

/** A store that keeps the first lease it takes for `holdMs` before handing it to the run. */
class HoldingStore extends SqliteRunStore {
  private held = false;

  constructor(
    path: string,
    private readonly holdMs: number,
  ) {
    super(path);
  }

  override async acquireLease(runId: string, owner: string, ttlMs: number, nowMs: number) {
    const lease = await super.acquireLease(runId, owner, ttlMs, nowMs);
    if (!this.held && this.holdMs > 0) {
      this.held = true;
      await sleep(this.holdMs);
    }
    return lease;
  }
}

/** Resolves at the first line on stdin, then lets stdin go so that it does not keep the process alive. */
function waitForLine(): Promise<void> {
  return new Promise((resolve) => {
    process.stdin.once('data', () => {
      process.stdin.destroy();
      resolve();
    });
  });
}

/** The codes a child reports with an exit code of their own, so the harness can act on them. */
const EXIT_CODES: Partial<Record<string, number>> = {
  'store.not_found': EXIT_RUN_NOT_FOUND,
  'store.conflict': EXIT_CONFLICT,
};

async function main(argv: readonly string[]): Promise<number> {
  const [databasePath, effectsPath, mode, runId, settingsJson] = argv;
  if (databasePath === undefined || effectsPath === undefined || runId === undefined) {
    throw new Error('usage: crash-child <database> <effects file> run|resume <runId> [settings]');
  }
  if (mode !== 'run' && mode !== 'resume') throw new Error(`mode must be run or resume, not ${String(mode)}`);
  const settings = (settingsJson === undefined ? {} : JSON.parse(settingsJson)) as ChildSettings;
  const store = new HoldingStore(databasePath, settings.holdLeaseMs ?? 0);
  try {
    const durability = {
      // By default one owner per run, as a restarted worker with a stable identity would have: the killed process
      // cannot release its lease, and the test only resumes once it is dead.
      owner: settings.owner ?? `crash-worker:${runId}`,
      ...(settings.leaseTtlMs === undefined ? {} : { leaseTtlMs: settings.leaseTtlMs }),
    };
    // A nested run's child agent: its own plan, the same tools and store; its events are printed too, so that a kill
    // can land inside the child run.
    const delegate =
      settings.nested === true
        ? agentTool(
            agent({
              name: 'crash-delegate',
              model: planModel(crashPlan(delegateRunId(runId))),
              tools: crashTools(effectsPath),
              store,
              durability,
              onEvent: (event: { type: string; step?: number; callIndex?: number }) =>
                report({
                  type: 'event',
                  event: `child:${event.type}`,
                  step: event.step,
                  callIndex: event.callIndex,
                }),
            }),
            { name: DELEGATE_TOOL, description: 'Hands the plan to a child agent' },
          )
        : undefined;
    const assistant = agent({
      name: 'crash',
      model: planModel(crashPlan(runId), delegate !== undefined),
      tools: [...crashTools(effectsPath), ...(delegate === undefined ? [] : [delegate])],
      store,
      durability,
    });
    const onEvent = (event: { type: string; step?: number; callIndex?: number }) =>
      report({ type: 'event', event: event.type, step: event.step, callIndex: event.callIndex });
    if (settings.waitForGo === true) {
      report({ type: 'ready' });
      await waitForLine();
    }
    let result: Awaited<ReturnType<typeof assistant.run>>;
    try {
      const { decisions } = settings;
      result =
        mode === 'run'
          ? await assistant.run('Carry out the plan.', { runId, onEvent })
          : await assistant.resume(runId, decisions === undefined ? { onEvent } : { decisions, onEvent });
    } catch (error) {
      const exitCode = KeelError.isInstance(error) ? EXIT_CODES[error.code] : undefined;
      if (exitCode === undefined || !KeelError.isInstance(error)) throw error;
      report({ type: 'error', code: error.code, message: error.message });
      return exitCode;
    }
    report({
      type: 'result',
      status: result.status,
      stopReason: result.stopReason,
      resumable: result.resumable,
      errorCode: result.error?.code,
      pending: (result.pending ?? []).map((entry) => ({
        kind: entry.kind,
        idempotencyKey: entry.idempotencyKey,
        toolName: entry.toolName,
      })),
      output: result.output,
    });
    return 0;
  } finally {
    await store.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const serialized = KeelError.isInstance(error)
      ? { code: error.code, message: error.message }
      : { message: String((error as Error)?.stack ?? error) };
    report({ type: 'error', ...serialized });
    process.exitCode = 1;
  },
);
