import { resolve } from 'node:path';
import type { TrustFlags } from '@keel/agent-file';
import { type Clock, KeelError, newRunId, type RunStore } from '@keel/core';
import { buildAgent } from '../../build/build-agent.js';
import { saveInvocation } from '../../build/invocation.js';
import { faultsSummary } from '../../build/models.js';
import { type Output, paint } from '../../output/output.js';
import { liveEvents } from '../../output/render.js';
import { type CommandTelemetry, type TelemetryFlags, withTelemetry } from '../../telemetry/telemetry.js';

/** What `keel run` is given. */
export interface RunCommandOptions {
  file: string;
  task: string;
  faults?: string;
  seed?: number;
  /** `--allow-key-host` values: hosts besides a provider's own that may receive an API key. */
  allowedKeyHosts: string[];
  /** `--allow-host`, `--allow-programs` and `--allow-env`, remembered for `keel resume`. Defaults to none. */
  trust?: TrustFlags;
  json: boolean;
  /** `--otlp`, `--metrics-port` and `--log json`. Defaults to none of them. */
  telemetry?: TelemetryFlags;
  workingDirectory: string;
  environment: NodeJS.ProcessEnv;
  signal: AbortSignal;
  clock: Clock;
}

/** `keel run <agent.yaml> "<task>"`: runs an agent file durably, showing live what happens, then the report. */
export async function runCommand(
  options: RunCommandOptions,
  store: RunStore,
  output: Output,
): Promise<number> {
  if (options.task.trim() === '') {
    throw new KeelError('config.invalid', 'The task is empty: say what the agent should do', {
      guidance: 'keel run <agent.yaml> "What is the weather in Paris?"',
    });
  }
  const agentFile = resolve(options.workingDirectory, options.file);
  return withTelemetry(options.telemetry, output, (telemetry) =>
    runWithTelemetry(options, agentFile, telemetry, store, output),
  );
}

async function runWithTelemetry(
  options: RunCommandOptions,
  agentFile: string,
  telemetry: CommandTelemetry,
  store: RunStore,
  output: Output,
): Promise<number> {
  const built = await buildAgent({
    agentFile,
    workingDirectory: options.workingDirectory,
    environment: options.environment,
    store,
    allowedKeyHosts: options.allowedKeyHosts,
    ...(options.trust === undefined ? {} : { trust: options.trust }),
    clock: options.clock,
    wrapTools: telemetry.wrapTools,
    ...(options.faults === undefined ? {} : { faults: options.faults }),
    ...(options.seed === undefined ? {} : { seed: options.seed }),
  });
  try {
    telemetry.observe(built.agent);
    const quiet = options.json || telemetry.jsonLines;
    const runId = newRunId();
    await saveInvocation(options.workingDirectory, runId, {
      agentFile,
      ...(options.faults === undefined ? {} : { faults: options.faults }),
      ...(options.seed === undefined ? {} : { seed: options.seed }),
      ...(options.allowedKeyHosts.length === 0 ? {} : { allowedKeyHosts: options.allowedKeyHosts }),
      ...(options.trust === undefined || Object.keys(options.trust).length === 0
        ? {}
        : { trust: options.trust }),
    });
    if (!quiet) {
      const chain = [built.models.model, ...built.models.fallbacks]
        .map((model) => `${model.provider}/${model.model}`)
        .join(' → ');
      output.out(`${paint(output, 'bold', `keel run ${built.file.name}`)}  run ${runId}  models ${chain}`);
      if (built.models.simulated) {
        output.out(
          paint(
            output,
            'grey',
            `offline simulated provider · faults ${faultsSummary(built.file, options.faults)} · seed ${options.seed ?? 1}`,
          ),
        );
      }
      if (built.tools.summary.length > 0)
        output.out(paint(output, 'grey', `tools ${built.tools.summary.join(' · ')}`));
      if (telemetry.metricsServer !== undefined)
        output.out(paint(output, 'grey', `metrics at ${telemetry.metricsServer.url}`));
      output.out(paint(output, 'grey', `task: ${options.task}`));
      output.out('');
    }
    const result = await built.agent.run(options.task, {
      runId,
      signal: options.signal,
      ...liveEvents(quiet, output),
    });
    return telemetry.present(result, options.json);
  } finally {
    await built.close();
  }
}
