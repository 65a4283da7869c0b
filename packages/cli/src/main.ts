import { readFileSync } from 'node:fs';
import { type Clock, KeelError, systemClock } from '@keel/core';
import {
  COMMAND_GROUPS,
  COMMANDS,
  type CommandContext,
  parseCommandArguments,
} from './commands/command-table.js';
import { commandSynopsis } from './commands/synopsis.js';
import { TRUST_USAGE } from './commands/trust-options.js';
import { endQuietlyWhenClosed, type Output, paint, processOutput } from './output/output.js';
import { apiKeyValues, redactingOutput } from './output/redacting-output.js';

/** `text` with each line indented by two spaces. */
const indented = (text: string): string => text.replace(/^/gm, '  ');

/** What `keel --help` prints: every command's synopsis (from its own help), then the options most of them share. */
const USAGE = `keel: run AI agents that survive failure

usage:
${indented(commandSynopsis(COMMANDS))}

Every command has its own --help (keel runs list --help, keel sessions show --help, ...) with its options;
a command refuses the options it does not take.

options:
  --faults SPEC   fault schedule of the simulated provider: a preset (none, demo, flaky, chaos) or entries such as
                  "rate_limit=0.2,server_error=0.1,reset=0.05" (default: none)
  --seed N        seed of the fault schedule (default: 1)
  --json          print the result as JSON
  --otlp URL      export traces and metrics over OTLP/HTTP to a receiver, such as http://127.0.0.1:4318, as
                  service.name OTEL_SERVICE_NAME (default: keel) with OTEL_RESOURCE_ATTRIBUTES; the last export,
                  as the command ends, waits at most 2 s for the receiver
  --metrics-port N  serve Prometheus metrics at http://127.0.0.1:N/metrics while the run (or resumption) lives,
                  and no longer: meant for long runs and keel worker, since a scrape every 15-60 s misses a run of
                  a few seconds; for short runs use --otlp, which sends the last values as the run ends
  --log json      print JSON log lines (one per event, then the result) in place of the live view
  --store         postgres://... or a SQLite file (default: ./.keel/keel.db)
  --approve KEY   run a call that waits for approval (KEY is its idempotency key, printed by keel run)
  --reject KEY=R  refuse it; the model sees a tool error with the reason R
  --execute KEY   run again a call that may or may not have run before a crash (its effect may happen twice)
  --abandon KEY   give up on such a call; the model is told its outcome is unknown
  --agent FILE    the agent file (relative or absolute), for a run started in another directory or machine
  --wait          when another process holds the run (its owner may have died), wait until its lease ends, at
                  most 10 minutes, then resume
  --redis URL     resume, cancel: the run is in a fleet (keel worker); the answers go through the queue to a worker,
                  a cancellation reaches the worker that holds the run at once
  --allow-key-host HOST
                  let an API key go to HOST (name, or name:port) when the agent file's baseUrl points there; keys
                  go only to the provider's own host over https otherwise (api.openai.com, api.anthropic.com); a
                  tool's secret header (headers: { authorization: { env: X_API_TOKEN } }) goes only to HOST;
                  implies --allow-host HOST
${TRUST_USAGE}
                  (keel resume keeps the consent a run was started with; chat, submit, worker, chaos and dashboard
                  take the same flags)
  --port N        dashboard: the port (default: 4800; 0 picks a free one)
  --host H        dashboard: the interface to bind (default: 127.0.0.1; any other needs a token)
  --token T       dashboard: the secret its API requires (default: KEEL_DASHBOARD_TOKEN, else generated and printed)
  keel chaos --help lists the chaos suite's scenarios and options; keel submit --help and keel worker --help
  say how runs go to a fleet of workers

exit codes: 0 completed, 1 failed, 2 invalid input, 3 interrupted (resumable), 130 cancelled (also by
            SIGINT, SIGTERM or SIGHUP) (keel chaos: 0 every goal met, 1 a goal missed)`;

/**
 * The CLI's entry: parses `argv`, runs the command, and returns the exit code. Every failure is printed as a
 * KeelError code and message, never a stack trace; no line printed ever holds the value of an API key variable of
 * `environment`. `clock` (defaults to the system clock) drives the agent and `keel resume --wait`. `printer` defaults
 * to the process's stdout and stderr; then a reader that leaves (`keel runs list | head -1`) ends the command quietly.
 */
export async function main(
  argv: readonly string[],
  environment: NodeJS.ProcessEnv,
  printer?: Output,
  workingDirectory: string = process.cwd(),
  clock: Clock = systemClock,
): Promise<number> {
  const output = redactingOutput(printer ?? processOutput(environment), apiKeyValues(environment));
  const controller = new AbortController();
  if (printer === undefined) {
    endQuietlyWhenClosed(() =>
      controller.abort(
        new KeelError('run.cancelled', 'The output was closed: its reader (such as head) left'),
      ),
    );
  }
  // SIGTERM (`kill`, `timeout`, `docker stop`) and SIGHUP (a closed terminal) end a command as Ctrl-C does: the run
  // is cancelled, checkpointed, and the programs it started are killed with their process groups. The same signal
  // again takes the default action (keel dies at once); what keel started dies with it through its lifeline.
  const onSignal = (signal: NodeJS.Signals) =>
    controller.abort(
      new KeelError(
        'run.cancelled',
        signal === 'SIGINT' ? 'Cancelled with Ctrl-C' : `Cancelled by ${signal}`,
      ),
    );
  for (const signal of STOP_SIGNALS) process.once(signal, onSignal);
  try {
    return await dispatch(argv, { environment, output, workingDirectory, signal: controller.signal, clock });
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
    for (const signal of STOP_SIGNALS) process.removeListener(signal, onSignal);
  }
}

/** The signals that cancel a command as Ctrl-C does. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

async function dispatch(argv: readonly string[], context: CommandContext): Promise<number> {
  const { output } = context;
  const [first, second] = argv;
  if (first === '--version') {
    output.out(keelVersion());
    return 0;
  }
  if (first === undefined || first === 'help' || first === '--help' || first === '-h') {
    output.out(USAGE);
    return first === undefined ? 2 : 0;
  }
  let name = first;
  let rest = argv.slice(1);
  const group = COMMAND_GROUPS[first];
  if (group !== undefined) {
    if (second === '--help' || second === '-h') {
      output.out(group);
      return 0;
    }
    name = `${first} ${second}`;
    rest = argv.slice(2);
    if (!COMMANDS.some((entry) => entry.name === name)) throw new KeelError('config.invalid', group);
  }
  const entry = COMMANDS.find((candidate) => candidate.name === name);
  if (entry === undefined)
    throw new KeelError('config.invalid', `Unknown command "${first}"; run keel --help for the commands`);
  const { values, positionals } = parseCommandArguments(name, entry.options, rest);
  if (values.help === true) {
    output.out(entry.usage);
    return 0;
  }
  return entry.run({ values, positionals, argv: rest }, context);
}

/** The version of @keel/cli, from its package.json (beside src/ and dist/). */
function keelVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}
