import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadAgentFile, parseAllowedHost, type TrustFlags, trustFlagsOf } from '@keel/agent-file';
import { type Clock, KeelError, type RunStore } from '@keel/core';
import { runQueue } from '@keel/worker';
import { BUILTIN_TOOL_NAMES } from '../../builtin-tools/builtin-tools.js';
import { type Output, paint } from '../../output/output.js';
import { openStore } from '../../store.js';
import { parsedArguments, redisUrlOf } from '../command-arguments.js';
import { SUBMIT_OPTIONS, SUBMIT_USAGE } from './submit-options.js';

/** What `keel submit` runs with, besides its arguments. */
export interface SubmitContext {
  output: Output;
  workingDirectory: string;
  environment: NodeJS.ProcessEnv;
  clock: Clock;
}

/** `keel submit ...`: parses the arguments, then {@link submitCommand}. */
export async function submitCli(argv: readonly string[], context: SubmitContext): Promise<number> {
  const { values, positionals } = parsedArguments('submit', () =>
    parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: { ...SUBMIT_OPTIONS, help: { type: 'boolean', short: 'h' } },
    }),
  );
  if (values.help === true) {
    context.output.out(SUBMIT_USAGE);
    return 0;
  }
  const [file, task, ...extra] = positionals;
  if (file === undefined || task === undefined || extra.length > 0) {
    throw new KeelError(
      'config.invalid',
      'usage: keel submit <agent.yaml> "<task>" (quote the task); run keel submit --help',
    );
  }
  const store = openStore(values.store, context.workingDirectory);
  try {
    return await submitCommand(
      {
        file,
        task,
        redis: redisUrlOf(values.redis, context.environment),
        ...(values['run-id'] === undefined ? {} : { runId: values['run-id'] }),
        ...(values.tenant === undefined ? {} : { tenant: values.tenant }),
        ...(values.priority === undefined ? {} : { priority: priorityOf(values.priority) }),
        allowedKeyHosts: (values['allow-key-host'] ?? []).map(parseAllowedHost),
        trust: trustFlagsOf(values),
        json: values.json === true,
        workingDirectory: context.workingDirectory,
        clock: context.clock,
      },
      store,
      context.output,
    );
  } finally {
    await store.close();
  }
}

/** What `keel submit` is given. */
export interface SubmitCommandOptions {
  file: string;
  task: string;
  /** Redis of the fleet (`--redis`). */
  redis: string;
  /** The run's id (`--run-id`). Defaults to a time-ordered UUID (`newRunId`). */
  runId?: string;
  /** The tenant the run spends for (`--tenant`). Defaults to none. */
  tenant?: string;
  /** The run's pace priority (`--priority`), an integer from -10 to 10. Defaults to 0. */
  priority?: number;
  /** `--allow-key-host` values, for a file whose model's baseUrl points at another host than its provider's. */
  allowedKeyHosts: string[];
  /** `--allow-host`, `--allow-programs` and `--allow-env`: the file is checked as a worker checks it. Defaults to none. */
  trust?: TrustFlags;
  json: boolean;
  workingDirectory: string;
  clock: Clock;
}

/**
 * `keel submit <agent.yaml> "<task>"`: stores a run of the agent file's agent as `queued` in the store and enqueues it
 * for the fleet's workers (`keel worker`); prints the run id (`--json`: `{ runId, agentName, status, enqueued }`).
 * The file is read to check it and learn the agent's name: the workers run their own copy of it.
 */
export async function submitCommand(
  options: SubmitCommandOptions,
  store: RunStore,
  output: Output,
): Promise<number> {
  if (options.task.trim() === '') {
    throw new KeelError('config.invalid', 'The task is empty: say what the agent should do', {
      guidance: 'keel submit <agent.yaml> "What is the weather in Paris?"',
    });
  }
  const file = await loadAgentFile(resolve(options.workingDirectory, options.file), BUILTIN_TOOL_NAMES, {
    allowedKeyHosts: options.allowedKeyHosts,
    ...options.trust,
  });
  const queue = runQueue({ store, redis: options.redis, clock: options.clock });
  try {
    const submitted = await queue.submit(file.name, options.task, {
      ...(options.runId === undefined ? {} : { runId: options.runId }),
      ...(options.tenant === undefined ? {} : { tenant: options.tenant }),
      ...(options.priority === undefined ? {} : { priority: options.priority }),
    });
    if (options.json) {
      output.out(JSON.stringify({ ...submitted, agentName: file.name, status: 'queued' }, null, 2));
      return 0;
    }
    output.out(`${paint(output, 'bold', 'queued')} run ${submitted.runId} of agent ${file.name}`);
    if (!submitted.enqueued) {
      output.error(
        `${paint(output, 'yellow', 'note')}: Redis did not answer; the run is stored as queued and a worker's sweep will enqueue it`,
      );
    }
    output.out(paint(output, 'grey', `follow it with: keel runs show ${submitted.runId}`));
    return 0;
  } finally {
    await queue.close();
  }
}

/** `--priority`'s value: an integer from -10 to 10, else `config.invalid` saying so. */
function priorityOf(text: string): number {
  const priority = Number(text);
  if (!/^-?\d+$/.test(text.trim()) || Math.abs(priority) > 10) {
    throw new KeelError('config.invalid', `--priority must be an integer from -10 to 10, not "${text}"`, {
      guidance: 'keel submit agent.yaml "task" --priority 5',
    });
  }
  return priority;
}
