import { resolve } from 'node:path';
import type { RunResult, RunStore } from '@keel/core';
import { buildAgent } from '../build-agent.js';
import { saveInvocation } from '../invocation.js';
import { type Output, paint } from '../output.js';
import { renderEvent, renderResult, resultJson } from '../render.js';

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

/** Exit codes of `keel run` and `keel resume`: 0 completed, 1 failed, 3 interrupted (resumable), 130 cancelled. */
export function exitCodeOf(result: RunResult<unknown>): number {
  return { completed: 0, failed: 1, interrupted: 3, cancelled: 130 }[result.status];
}

/** `keel run <agent.yaml> "<task>"`: runs an agent file durably, showing live what happens, then the report. */
export async function runCommand(
  options: RunCommandOptions,
  store: RunStore,
  output: Output,
): Promise<number> {
  const agentFile = resolve(options.workingDirectory, options.file);
  const built = await buildAgent({
    agentFile,
    workingDirectory: options.workingDirectory,
    environment: options.environment,
    store,
    ...(options.faults === undefined ? {} : { faults: options.faults }),
    ...(options.seed === undefined ? {} : { seed: options.seed }),
  });
  try {
    const runId = crypto.randomUUID();
    await saveInvocation(options.workingDirectory, runId, {
      agentFile,
      ...(options.faults === undefined ? {} : { faults: options.faults }),
      ...(options.seed === undefined ? {} : { seed: options.seed }),
    });
    if (!options.json) {
      const chain = [built.models.model, ...built.models.fallbacks]
        .map((model) => `${model.provider}/${model.model}`)
        .join(' → ');
      output.out(`${paint(output, 'bold', `keel run ${built.file.name}`)}  run ${runId}  models ${chain}`);
      if (built.models.simulated) {
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
    const result = await built.agent.run(options.task, {
      runId,
      signal: options.signal,
      ...(options.json ? {} : { onEvent: (event) => renderEvent(event, output) }),
    });
    if (options.json) output.out(JSON.stringify(resultJson(result), null, 2));
    else renderResult(result, output);
    return exitCodeOf(result);
  } finally {
    await built.models.close();
  }
}
