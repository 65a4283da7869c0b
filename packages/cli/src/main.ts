import { parseArgs } from 'node:util';
import { type Clock, KeelError, systemClock } from '@keel/core';
import { cancelCommand } from './commands/cancel.js';
import { integerArgument } from './commands/command-arguments.js';
import { chatCommand } from './commands/chat.js';
import { chaosCommand } from './commands/chaos.js';
import { dashboardCommand } from './commands/dashboard.js';
import { answerThroughQueue, resumeCommand } from './commands/resume.js';
import { runCommand } from './commands/run.js';
import { listRuns, showRun } from './commands/runs.js';
import { sessionsCommand } from './commands/sessions.js';
import { parseAllowedHost } from './key-hosts.js';
import { endQuietlyWhenClosed, type Output, paint, processOutput } from './output.js';
import { apiKeyValues, redactingOutput } from './redacting-output.js';
import { withStore } from './store.js';
import { telemetryFlagsOf } from './telemetry.js';
import { TRUST_OPTIONS, TRUST_USAGE, trustFlagsOf } from './trust.js';

const USAGE = `keel: run AI agents that survive failure

usage:
  keel run <agent.yaml> "<task>" [--faults SPEC] [--seed N] [--allow-host HOST]... [--allow-programs]
           [--allow-env NAME]... [--allow-key-host HOST]... [--json] [--store URL|PATH] [--otlp URL]
           [--metrics-port N] [--log json]
  keel chat <agent.yaml> [--session ID] [--json] [--store URL|PATH]      (keel chat --help)
  keel sessions list|show <id>|delete <id> [--json] [--store URL|PATH]  (keel sessions --help)
  keel runs list [--status STATUS] [--limit N] [--json] [--store URL|PATH]
  keel runs show <run-id> [--json] [--store URL|PATH]
  keel resume <run-id> [--approve KEY]... [--reject KEY[=REASON]]... [--execute KEY]... [--abandon KEY]...
              [--wait] [--agent <agent.yaml>] [--allow-host HOST]... [--allow-programs] [--allow-env NAME]...
              [--allow-key-host HOST]... [--json] [--store URL|PATH]
              [--otlp URL] [--metrics-port N] [--log json] [--redis URL]
  keel cancel <run-id> [--reason TEXT] [--json] [--store URL|PATH] [--redis URL]
  keel chaos <agent.yaml> [--scenarios a,b] [--runs N] [--seed N] [--html report.html] [--json]
  keel submit <agent.yaml> "<task>" [--store URL|PATH] [--redis URL] [--run-id ID] [--json]
  keel worker <agent.yaml>... [--store URL|PATH] [--redis URL] [--concurrency N] [--lease-ttl-ms N] [--json]
              [--metrics-port N] [--otlp URL] [--log json]   (keel worker --help)
  keel dashboard [--store URL|PATH] [--port N] [--host H] [--token T] [--agent <agent.yaml>]...
                 [--allow-key-host HOST]... [--json]   (keel dashboard --help for its options)

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

/** What every command runs with. */
interface CommandContext {
  environment: NodeJS.ProcessEnv;
  output: Output;
  workingDirectory: string;
  signal: AbortSignal;
  clock: Clock;
}

async function dispatch(argv: readonly string[], context: CommandContext): Promise<number> {
  const { environment, output, workingDirectory, signal, clock } = context;
  if (argv[0] === 'dashboard')
    return dashboardCommand(argv.slice(1), { environment, output, workingDirectory, signal });
  if (argv[0] === 'chat')
    return chatCommand(argv.slice(1), { environment, output, workingDirectory, signal });
  if (argv[0] === 'sessions') return sessionsCommand(argv.slice(1), { output, workingDirectory });
  if (argv[0] === 'chaos') return chaosCommand(argv.slice(1), { output, workingDirectory, signal });
  // The fleet commands load BullMQ and the Redis client only when they run, so other commands start as fast.
  if (argv[0] === 'submit') {
    const { submitCli } = await import('./commands/submit.js');
    return submitCli(argv.slice(1), { output, workingDirectory, environment, clock });
  }
  if (argv[0] === 'worker') {
    const { workerCli } = await import('./commands/worker.js');
    return workerCli(argv.slice(1), { output, workingDirectory, environment, signal, clock });
  }
  const { values, positionals } = parse(argv);
  const allowedKeyHosts = (values['allow-key-host'] ?? []).map(parseAllowedHost);
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
        allowedKeyHosts,
        trust: trustFlagsOf(values),
        json: values.json === true,
        workingDirectory,
        environment,
        signal,
        clock,
      };
      if (values.faults !== undefined) options.faults = values.faults;
      if (values.seed !== undefined) options.seed = integerArgument('--seed', values.seed, 0);
      options.telemetry = telemetryFlagsOf(values, environment);
      return withStore(values.store, workingDirectory, {}, (store) => runCommand(options, store, output));
    }
    case 'resume': {
      const [runId, ...extra] = rest;
      if (runId === undefined || extra.length > 0)
        throw new KeelError('config.invalid', 'usage: keel resume <run-id> [options]');
      const options: Parameters<typeof resumeCommand>[0] = {
        runId,
        approve: values.approve ?? [],
        reject: values.reject ?? [],
        execute: values.execute ?? [],
        abandon: values.abandon ?? [],
        allowedKeyHosts,
        trust: trustFlagsOf(values),
        wait: values.wait === true,
        json: values.json === true,
        workingDirectory,
        environment,
        signal,
        clock,
      };
      if (values.agent !== undefined) options.agentFile = values.agent;
      options.telemetry = telemetryFlagsOf(values, environment);
      if (values.redis !== undefined) {
        const redis = values.redis;
        return withStore(values.store, workingDirectory, {}, (store) =>
          answerThroughQueue(options, store, redis, output),
        );
      }
      return withStore(values.store, workingDirectory, {}, (store) => resumeCommand(options, store, output));
    }
    case 'cancel': {
      const [runId, ...extra] = rest;
      if (runId === undefined || extra.length > 0)
        throw new KeelError('config.invalid', 'usage: keel cancel <run-id>');
      return withStore(values.store, workingDirectory, {}, (store) =>
        cancelCommand(
          store,
          runId,
          { reason: values.reason, json: values.json === true, redis: values.redis },
          output,
        ),
      );
    }
    case 'runs': {
      const [subcommand, runId] = rest;
      // Listing and showing only read: a store the user may not write still works, and none is created.
      return withStore(values.store, workingDirectory, { readOnly: true }, async (store) => {
        if (subcommand === 'list') {
          const options: Parameters<typeof listRuns>[1] = { json: values.json === true };
          if (values.status !== undefined) options.status = values.status;
          if (values.limit !== undefined) options.limit = integerArgument('--limit', values.limit, 1);
          return listRuns(store, options, output);
        }
        if (subcommand === 'show' && runId !== undefined)
          return showRun(store, runId, { json: values.json === true }, output);
        throw new KeelError('config.invalid', 'usage: keel runs list | keel runs show <run-id>');
      });
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
        approve: { type: 'string', multiple: true },
        reject: { type: 'string', multiple: true },
        execute: { type: 'string', multiple: true },
        abandon: { type: 'string', multiple: true },
        agent: { type: 'string' },
        wait: { type: 'boolean' },
        'allow-key-host': { type: 'string', multiple: true },
        ...TRUST_OPTIONS,
        reason: { type: 'string' },
        redis: { type: 'string' },
        otlp: { type: 'string' },
        'metrics-port': { type: 'string' },
        log: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new KeelError('config.invalid', `${(error as Error).message}; run keel --help for the options`);
  }
}
