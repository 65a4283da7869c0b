// The child process of the crash test (crash.test.ts): runs or resumes one durable run against a SQLite store, with
// tools whose side effect is a line appended to a file, and reports on stdout, one JSON object a line, so that the
// test can choose when to SIGKILL it. A test fixture compiled with the package, not part of its API.
//
//   node crash-child.js <database> <effects file> run|resume <runId> [decisions as JSON]
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  agent,
  KeelError,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  tool,
} from '@keel/core';
import { SqliteRunStore } from '../sqlite-run-store.js';
import { CRASH_TOOLS, type CrashPlan, crashPlan, EXIT_RUN_NOT_FOUND, effectLine } from './crash-plan.js';
import { seedOf } from './prng.js';

function report(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

/** A few real milliseconds, fixed by the text, so that a kill can land inside a model or tool call. */
function pauseMs(text: string, min: number, max: number): number {
  return min + (seedOf(text) % (max - min + 1));
}

/** Plays the model: a function of the conversation alone, so a resumed run that asks again gets the same answer. */
function planModel(plan: CrashPlan): ModelProvider {
  return {
    provider: 'crash',
    model: 'plan',
    async generate(request: ModelRequest): Promise<ModelResponse> {
      const step = request.messages.filter((message) => message.role === 'assistant').length + 1;
      await sleep(pauseMs(`${plan.runId}/model/${step}`, 0, 2));
      const usage = { inputTokens: 10, outputTokens: 5 };
      const calls = plan.steps[step - 1];
      if (calls !== undefined) {
        return {
          content: '',
          toolCalls: calls.map((call) => ({
            id: call.callId,
            name: call.toolName,
            arguments: JSON.stringify({ note: call.callId }),
          })),
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

async function main(argv: readonly string[]): Promise<number> {
  const [databasePath, effectsPath, mode, runId, decisionsJson] = argv;
  if (databasePath === undefined || effectsPath === undefined || runId === undefined) {
    throw new Error('usage: crash-child <database> <effects file> run|resume <runId> [decisions]');
  }
  const store = new SqliteRunStore(databasePath);
  try {
    const assistant = agent({
      name: 'crash',
      model: planModel(crashPlan(runId)),
      tools: crashTools(effectsPath),
      store,
      // One owner per run, as a restarted worker with a stable identity would have: the killed process cannot
      // release its lease, and the test only resumes once it is dead.
      durability: { owner: `crash-worker:${runId}` },
    });
    const onEvent = (event: { type: string; step?: number; callIndex?: number }) =>
      report({ type: 'event', event: event.type, step: event.step, callIndex: event.callIndex });
    let result: Awaited<ReturnType<typeof assistant.run>>;
    if (mode === 'run') {
      result = await assistant.run('Carry out the plan.', { runId, onEvent });
    } else if (mode === 'resume') {
      const decisions =
        decisionsJson === undefined
          ? undefined
          : (JSON.parse(decisionsJson) as Record<string, 'execute' | 'abandon'>);
      try {
        result = await assistant.resume(
          runId,
          decisions === undefined ? { onEvent } : { decisions, onEvent },
        );
      } catch (error) {
        if (KeelError.isInstance(error) && error.code === 'store.not_found') {
          report({ type: 'error', code: error.code, message: error.message });
          return EXIT_RUN_NOT_FOUND;
        }
        throw error;
      }
    } else {
      throw new Error(`mode must be run or resume, not ${String(mode)}`);
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
