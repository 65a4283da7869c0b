import { dirname, join, resolve } from 'node:path';
import { agent, type RunResult, type Tool } from '@keel/core';
import { loadAgentFile } from '../agent-file.js';
import { BUILTIN_TOOL_NAMES, builtinTools } from '../builtin-tools.js';
import { resolveModels } from '../models.js';
import { type Output, paint } from '../output.js';
import { renderEvent, renderResult } from '../render.js';

/** What `keel run` is given. */
export interface RunCommandOptions {
  file: string;
  task: string;
  faults?: string;
  seed?: number;
  json: boolean;
  workingDirectory: string;
  environment: NodeJS.ProcessEnv;
  signal: AbortSignal;
}

/** Exit codes of `keel run`: 0 completed, 1 failed, 3 interrupted (waiting for a decision), 130 cancelled. */
export function exitCodeOf(result: RunResult<unknown>): number {
  return { completed: 0, failed: 1, interrupted: 3, cancelled: 130 }[result.status];
}

/** `keel run <agent.yaml> "<task>"`: runs an agent file, showing live what happens, then the report. */
export async function runCommand(options: RunCommandOptions, output: Output): Promise<number> {
  const path = resolve(options.workingDirectory, options.file);
  const file = await loadAgentFile(path, BUILTIN_TOOL_NAMES);
  const available = builtinTools({
    filesDirectory: dirname(path),
    outboxPath: join(options.workingDirectory, '.keel', 'outbox.jsonl'),
  });
  const tools: Tool[] = file.tools.map((name) => available.get(name)!);
  const simulation: { faults?: string; seed?: number; environment: NodeJS.ProcessEnv } = {
    environment: options.environment,
  };
  if (options.faults !== undefined) simulation.faults = options.faults;
  if (options.seed !== undefined) simulation.seed = options.seed;
  const models = resolveModels(file, simulation);
  try {
    const assistant = agent({
      name: file.name,
      model: models.model,
      fallbacks: models.fallbacks,
      tools,
      ...(file.instructions === undefined ? {} : { instructions: file.instructions }),
      ...(Object.keys(file.limits).length === 0 ? {} : { limits: file.limits }),
      ...(file.retry.maxAttempts === undefined ? {} : { retry: { maxAttempts: file.retry.maxAttempts } }),
    });
    if (!options.json) {
      const chain = [models.model, ...models.fallbacks]
        .map((model) => `${model.provider}/${model.model}`)
        .join(' → ');
      output.out(`${paint(output, 'bold', `keel run ${file.name}`)}  models ${chain}`);
      if (models.simulated) {
        output.out(
          paint(
            output,
            'grey',
            `offline simulated provider · faults ${options.faults ?? 'none'} · seed ${options.seed ?? 1}`,
          ),
        );
      }
      output.out(paint(output, 'grey', `task: ${options.task}`));
      output.out('');
    }
    const result = await assistant.run(options.task, {
      signal: options.signal,
      ...(options.json ? {} : { onEvent: (event) => renderEvent(event, output) }),
    });
    if (options.json) {
      output.out(JSON.stringify(toJson(result), null, 2));
    } else {
      renderResult(result, output);
      output.out(paint(output, 'grey', `run id ${result.runId}`));
    }
    return exitCodeOf(result);
  } finally {
    await models.close();
  }
}

/** The result as JSON: the error serialised (redacted), the state left out (it repeats the messages). */
function toJson(result: RunResult<unknown>): Record<string, unknown> {
  return {
    runId: result.runId,
    status: result.status,
    stopReason: result.stopReason,
    ...(result.stopDetail === undefined ? {} : { stopDetail: result.stopDetail }),
    output: result.output ?? null,
    error: result.error?.toJSON() ?? null,
    usage: result.usage,
    report: result.report,
    messages: result.messages,
  };
}
