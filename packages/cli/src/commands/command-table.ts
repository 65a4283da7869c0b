import { type ParseArgsConfig, parseArgs } from 'node:util';
import { type Clock, KeelError } from '@keel/core';
import type { Output } from '../output/output.js';
import { cancelCli } from './cancel/cancel-cli.js';
import { CHAOS_OPTIONS, CHAOS_USAGE, chaosCommand } from './chaos/chaos.js';
import { CHAT_OPTIONS, CHAT_USAGE, chatCommand } from './chat/chat.js';
import { DASHBOARD_OPTIONS, DASHBOARD_USAGE, dashboardCommand } from './dashboard/dashboard.js';
import { resumeCli } from './resume/resume-cli.js';
import { runCli } from './run/run-cli.js';
import { runsListCli, runsShowCli } from './runs/runs-cli.js';
import { sessionsDeleteCli, sessionsListCli, sessionsShowCli } from './sessions/sessions-cli.js';
import { SUBMIT_OPTIONS, SUBMIT_USAGE } from './submit/submit-options.js';
import { WORKER_OPTIONS, WORKER_USAGE } from './worker/worker-options.js';

/** The options a command takes, for `parseArgs`. */
export type ParseArgsOptionsConfig = NonNullable<ParseArgsConfig['options']>;

/** What every command runs with. */
export interface CommandContext {
  environment: NodeJS.ProcessEnv;
  output: Output;
  workingDirectory: string;
  signal: AbortSignal;
  clock: Clock;
}

/** The options of a command, as `parseArgs` returns them. */
export type ParsedValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

/** A command's arguments, parsed against its own options (`--help` handled before it runs). */
export interface ParsedCommand {
  /** The option values, by long name. */
  values: ParsedValues;
  /** The arguments that are not options, after the command's name. */
  positionals: string[];
  /** Everything after the command's name, as given (chat, chaos, submit, worker and dashboard read it again). */
  argv: readonly string[];
}

/**
 * One command of `keel`: its name (`run`, `runs list`), a one-line summary for `keel --help`, what `keel <name>
 * --help` prints, its options (`--help`/`-h` is added to every command; any other option is refused), and what it
 * runs.
 */
export interface CommandEntry {
  name: string;
  summary: string;
  usage: string;
  options: ParseArgsOptionsConfig;
  run(parsed: ParsedCommand, context: CommandContext): Promise<number>;
}

/** The groups of subcommands (`keel runs list`), with what `keel <group> --help` prints. */
export const COMMAND_GROUPS: Readonly<Record<string, string>> = {
  runs: `usage:
  keel runs list [--status STATUS] [--limit N] [--json] [--store URL|PATH]
  keel runs show <run-id> [--json] [--store URL|PATH]

keel runs list --help and keel runs show --help give each one's options.`,
  sessions: `usage:
  keel sessions list [--limit N] [--json] [--store URL|PATH]
  keel sessions show <session-id> [--json] [--store URL|PATH]
  keel sessions delete <session-id> [--force] [--json] [--store URL|PATH]

Sessions are conversations kept across runs (keel chat, or agent.run(input, { sessionId })): one turn per completed run.
keel sessions list --help, keel sessions show --help and keel sessions delete --help give each one's options.`,
};

/**
 * Parses `argv` (the arguments after the command's name) against `options` plus `--help`. Every option the command
 * does not take is named in one `config.invalid` error (exit 2), such as `keel runs list takes no --approve
 * (`Unknown options '--approve', '--faults' for keel runs list`).
 */
export function parseCommandArguments(
  name: string,
  options: ParseArgsOptionsConfig,
  argv: readonly string[],
): { values: ParsedValues; positionals: string[] } {
  const known: ParseArgsOptionsConfig = { ...options, help: { type: 'boolean', short: 'h' } };
  const { tokens } = parseArgs({
    args: [...argv],
    options: known,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  const unknown = [
    ...new Set(
      tokens.flatMap((token) =>
        token.kind === 'option' && known[token.name] === undefined
          ? [token.rawName.split('=')[0] ?? token.rawName]
          : [],
      ),
    ),
  ];
  if (unknown.length > 0) {
    const named = unknown.map((option) => `'${option}'`).join(', ');
    throw new KeelError(
      'config.invalid',
      `Unknown option${unknown.length === 1 ? '' : 's'} ${named} for keel ${name}; run keel ${name} --help for its options`,
      { data: { command: name, options: unknown } },
    );
  }
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options: known,
      allowPositionals: true,
      strict: true,
    });
    return { values: values as ParsedValues, positionals };
  } catch (error) {
    throw new KeelError(
      'config.invalid',
      `${(error as Error).message}; run keel ${name} --help for its options`,
    );
  }
}

/** Every command of `keel`, in the order `keel --help` lists them. */
export const COMMANDS: readonly CommandEntry[] = [
  runCli,
  {
    name: 'chat',
    summary: 'talk with an agent file, one turn per run, kept in a session',
    usage: CHAT_USAGE,
    options: CHAT_OPTIONS,
    run: ({ argv }, { environment, output, workingDirectory, signal }) =>
      chatCommand(argv, { environment, output, workingDirectory, signal }),
  },
  sessionsListCli,
  sessionsShowCli,
  sessionsDeleteCli,
  runsListCli,
  runsShowCli,
  resumeCli,
  cancelCli,
  {
    name: 'chaos',
    summary: 'score an agent file in seeded failure scenarios',
    usage: CHAOS_USAGE,
    options: CHAOS_OPTIONS,
    run: ({ argv }, { output, workingDirectory, signal }) =>
      chaosCommand(argv, { output, workingDirectory, signal }),
  },
  {
    name: 'submit',
    summary: 'queue a run for a fleet of workers',
    usage: SUBMIT_USAGE,
    options: SUBMIT_OPTIONS,
    // The fleet commands load BullMQ and the Redis client only when they run, so other commands start as fast.
    run: async ({ argv }, { output, workingDirectory, environment, clock }) => {
      const { submitCli } = await import('./submit/submit.js');
      return submitCli(argv, { output, workingDirectory, environment, clock });
    },
  },
  {
    name: 'worker',
    summary: 'run the queued runs of agent files, as one worker of a fleet',
    usage: WORKER_USAGE,
    options: WORKER_OPTIONS,
    run: async ({ argv }, { output, workingDirectory, environment, signal, clock }) => {
      const { workerCli } = await import('./worker/worker.js');
      return workerCli(argv, { output, workingDirectory, environment, signal, clock });
    },
  },
  {
    name: 'dashboard',
    summary: 'serve a web page over the run store',
    usage: DASHBOARD_USAGE,
    options: DASHBOARD_OPTIONS,
    run: ({ argv }, { environment, output, workingDirectory, signal }) =>
      dashboardCommand(argv, { environment, output, workingDirectory, signal }),
  },
];
