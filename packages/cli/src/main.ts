import { parseArgs } from 'node:util';
import { KeelError } from '@keel/core';
import { runCommand } from './commands/run.js';
import { listRuns, showRun } from './commands/runs.js';
import { type Output, paint, processOutput } from './output.js';
import { openStore } from './store.js';

const USAGE = `keel: run AI agents that survive failure

usage:
  keel run <agent.yaml> "<task>" [--faults SPEC] [--seed N] [--json]
  keel runs list [--status STATUS] [--limit N] [--json] [--store URL|PATH]
  keel runs show <run-id> [--json] [--store URL|PATH]

options:
  --faults SPEC   fault schedule of the simulated provider: a preset (none, demo, flaky, chaos) or entries such as
                  "rate_limit=0.2,server_error=0.1,reset=0.05" (default: none)
  --seed N        seed of the fault schedule (default: 1)
  --json          print the result as JSON
  --store         postgres://... or a SQLite file (default: ./.keel/keel.db)`;

/**
 * The CLI's entry: parses `argv`, runs the command, and returns the exit code. Every failure is printed as a
 * KeelError code and message, never a stack trace.
 */
export async function main(
  argv: readonly string[],
  environment: NodeJS.ProcessEnv,
  output: Output = processOutput(environment),
  workingDirectory: string = process.cwd(),
): Promise<number> {
  const controller = new AbortController();
  const onInterrupt = () => controller.abort(new KeelError('run.cancelled', 'Cancelled with Ctrl-C'));
  process.once('SIGINT', onInterrupt);
  try {
    return await dispatch(argv, environment, output, workingDirectory, controller.signal);
  } catch (error) {
    const keelError = KeelError.isInstance(error)
      ? error
      : new KeelError('internal.unexpected', error instanceof Error ? error.message : String(error), {
          cause: error,
        });
    output.error(`${paint(output, 'red', keelError.code)}: ${keelError.message}`);
    if (keelError.guidance !== undefined) output.error(`guidance: ${keelError.guidance}`);
    return keelError.code === 'config.invalid' ? 2 : 1;
  } finally {
    process.removeListener('SIGINT', onInterrupt);
  }
}

async function dispatch(
  argv: readonly string[],
  environment: NodeJS.ProcessEnv,
  output: Output,
  workingDirectory: string,
  signal: AbortSignal,
): Promise<number> {
  const { values, positionals } = parse(argv);
  const [command, ...rest] = positionals;
  if (values.help === true || command === undefined || command === 'help') {
    output.out(USAGE);
    return command === undefined && values.help !== true ? 2 : 0;
  }
  switch (command) {
    case 'run': {
      const [file, task, ...extra] = rest;
      if (file === undefined || task === undefined || extra.length > 0) {
        throw new KeelError('config.invalid', 'usage: keel run <agent.yaml> "<task>" (quote the task)');
      }
      const options: Parameters<typeof runCommand>[0] = {
        file,
        task,
        json: values.json === true,
        workingDirectory,
        environment,
        signal,
      };
      if (values.faults !== undefined) options.faults = values.faults;
      if (values.seed !== undefined) options.seed = integerOption('--seed', values.seed, 0);
      return runCommand(options, output);
    }
    case 'runs': {
      const [subcommand, runId] = rest;
      const store = openStore(values.store, workingDirectory);
      try {
        if (subcommand === 'list') {
          const options: Parameters<typeof listRuns>[1] = { json: values.json === true };
          if (values.status !== undefined) options.status = values.status;
          if (values.limit !== undefined) options.limit = integerOption('--limit', values.limit, 1);
          return await listRuns(store, options, output);
        }
        if (subcommand === 'show' && runId !== undefined)
          return await showRun(store, runId, { json: values.json === true }, output);
        throw new KeelError('config.invalid', 'usage: keel runs list | keel runs show <run-id>');
      } finally {
        await store.close();
      }
    }
    default:
      throw new KeelError('config.invalid', `Unknown command "${command}"; run keel --help for the commands`);
  }
}

function parse(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        faults: { type: 'string' },
        seed: { type: 'string' },
        json: { type: 'boolean' },
        store: { type: 'string' },
        status: { type: 'string' },
        limit: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new KeelError('config.invalid', `${(error as Error).message}; run keel --help for the options`);
  }
}

function integerOption(name: string, value: string, minimum: number): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < minimum) {
    throw new KeelError(
      'config.invalid',
      `${name} must be an integer of at least ${minimum}, not "${value}"`,
    );
  }
  return parsed;
}
