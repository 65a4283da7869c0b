import { access } from 'node:fs/promises';
import { relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadAgentFile, parseAllowedHost, type TrustFlags, trustFlagsOf } from '@keel/agent-file';
import { KeelError, type RunStore, redactSecrets } from '@keel/core';
import { type Dashboard, type ResumeOutcome, type ResumeRun, startDashboard } from '@keel/dashboard';
import { invocationPath } from '../../build/invocation.js';
import { BUILTIN_TOOL_NAMES } from '../../builtin-tools/builtin-tools.js';
import { type Output, paint } from '../../output/output.js';
import { apiKeyValues, secretReplacer } from '../../output/redacting-output.js';
import { openStore } from '../../store.js';
import { resumeCommand } from '../resume/resume.js';
import { synopsisOf } from '../synopsis.js';
import { TRUST_OPTIONS, TRUST_USAGE } from '../trust-options.js';

/** The environment variable holding the dashboard's token when `--token` is not given. */
export const TOKEN_VARIABLE = 'KEEL_DASHBOARD_TOKEN';

/** What `keel dashboard` runs with, besides its arguments. */
export interface DashboardCommandContext {
  environment: NodeJS.ProcessEnv;
  output: Output;
  workingDirectory: string;
  /** Stops the dashboard when it aborts (Ctrl-C). */
  signal: AbortSignal;
}

const USAGE_LINE =
  'usage: keel dashboard [--store URL|PATH] [--port N] [--host H] [--token T] [--agent FILE]... [--allow-key-host HOST]... [--allow-host HOST]... [--allow-programs] [--allow-env NAME]... [--json]';

/** What `keel dashboard --help` prints. */
export const DASHBOARD_USAGE = `keel dashboard: a web page over the run store (runs, timelines, reports, pending decisions)

${synopsisOf(USAGE_LINE)
  .map((line, index) => `${index === 0 ? 'usage: ' : '       '}${line}`)
  .join('\n')}

options:
  --store URL|PATH  postgres://... or a SQLite file (default: ./.keel/keel.db)
  --port N          the port to listen on (default: 4800; 0 picks a free one)
  --host H          the interface to bind (default: 127.0.0.1; any other host needs a token)
  --token T         the secret the page's API requires, at least 16 characters
                    (default: ${TOKEN_VARIABLE}, else one is generated and printed in the page address)
  --agent FILE      an agent file to resume runs of its agent with, for runs not started by keel run in this
                    directory (repeat it for several agents; default: none)
  --allow-key-host HOST
                    let an API key go to HOST (name, or name:port) when an agent file's baseUrl points there, for
                    --agent files and the runs the page resumes (default: none: keys go only to the provider's own
                    host over https)
${TRUST_USAGE.replace(/^ {18}/gm, '                    ')}
                    (for --agent files and the runs the page resumes, besides the consent each run was started with)
  --json            print the start-up line as one JSON object: { url, host, port, store, tokenGenerated }
  --help, -h        print this help

Ctrl-C stops the dashboard; runs it resumed are waited for (a second Ctrl-C leaves them resumable).`;

/** The options of `keel dashboard`, for `parseArgs`. */
export const DASHBOARD_OPTIONS = {
  store: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  token: { type: 'string' },
  agent: { type: 'string', multiple: true },
  'allow-key-host': { type: 'string', multiple: true },
  ...TRUST_OPTIONS,
  json: { type: 'boolean' },
} as const;

/**
 * `keel dashboard`: serves the dashboard over the run store until the signal aborts, then waits for the runs it
 * resumed to stop. Decisions answered on the page resume the run through `keel resume`'s own code path, with the
 * agent file recorded by `keel run` in this directory, or else the `--agent` file whose agent name matches the run's.
 */
export async function dashboardCommand(
  argv: readonly string[],
  context: DashboardCommandContext,
): Promise<number> {
  const values = parse(argv);
  if (values.help === true) {
    context.output.out(DASHBOARD_USAGE);
    return 0;
  }
  const token = values.token ?? context.environment[TOKEN_VARIABLE];
  const allowedKeyHosts = (values['allow-key-host'] ?? []).map(parseAllowedHost);
  const trust = trustFlagsOf(values);
  const agents = await agentFilesByName(values.agent ?? [], context.workingDirectory, allowedKeyHosts, trust);
  const store = openStore(values.store, context.workingDirectory);
  let dashboard: Dashboard;
  try {
    dashboard = await startDashboard({
      store,
      ...(values.host === undefined ? {} : { host: values.host }),
      ...(values.port === undefined ? {} : { port: portOption(values.port) }),
      ...(token === undefined || token === '' ? {} : { token }),
      resume: cliResume(store, agents, allowedKeyHosts, trust, context),
      // The page shows no key that keel run and keel runs show would print as [redacted].
      redact: secretReplacer(apiKeyValues(context.environment)),
    });
  } catch (error) {
    await store.close();
    throw error;
  }
  const { output } = context;
  const address = dashboard.tokenGenerated ? dashboard.pageUrl : dashboard.url;
  // A PostgreSQL URL may hold a password: it is never printed.
  const storeShown = redactSecrets(values.store ?? './.keel/keel.db');
  if (values.json === true) {
    const { hostname, port } = new URL(dashboard.url);
    output.out(
      JSON.stringify({
        url: address,
        host: hostname,
        port: Number(port),
        store: storeShown,
        tokenGenerated: dashboard.tokenGenerated,
      }),
    );
  } else {
    printStartup(output, address, storeShown, dashboard);
  }
  await new Promise<void>((resolve) => {
    if (context.signal.aborted) resolve();
    else context.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  const resuming = dashboard.resumesInProgress;
  if (resuming > 0) {
    const line = `waiting for ${resuming} resumed run${resuming === 1 ? '' : 's'} to stop (Ctrl-C again to leave now: keel resume continues ${resuming === 1 ? 'it' : 'them'} later)`;
    // On stderr with --json: stdout holds the start-up object alone.
    if (values.json === true) output.error(line);
    else output.out(line);
  }
  try {
    await dashboard.close();
  } finally {
    await store.close();
  }
  return 0;
}

function printStartup(output: Output, address: string, store: string, dashboard: Dashboard): void {
  output.out(`${paint(output, 'bold', 'keel dashboard')}  ${address}`);
  output.out(paint(output, 'grey', `store ${store} · Ctrl-C to stop`));
  if (dashboard.tokenGenerated) {
    output.out(
      paint(
        output,
        'grey',
        `token ${dashboard.token} (generated; set ${TOKEN_VARIABLE} or --token to choose it)`,
      ),
    );
  }
}

/**
 * Resumes a run with `keel resume`'s command, the answers given as its flags, so that the page resumes exactly as
 * the command line does. Refused before anything runs when neither this directory's record of the run nor an
 * `--agent` file names the agent to build.
 */
function cliResume(
  store: RunStore,
  agents: Map<string, string>,
  allowedKeyHosts: string[],
  trust: TrustFlags,
  context: DashboardCommandContext,
): ResumeRun {
  return async (request) => {
    const recorded = await exists(invocationPath(context.workingDirectory, request.runId));
    const agentFile = recorded ? undefined : agents.get(request.agentName);
    if (!recorded && agentFile === undefined) {
      throw new KeelError(
        'config.invalid',
        `No agent file is known for run ${request.runId} (agent ${request.agentName}): it was not started with keel run in this directory`,
        {
          guidance: `Start the dashboard with --agent <file> naming the agent file of "${request.agentName}".`,
        },
      );
    }
    const approve: string[] = [];
    const reject: string[] = [];
    for (const [key, answer] of Object.entries(request.approvals)) {
      if (answer.approved) approve.push(key);
      else reject.push(answer.reason === undefined ? key : `${key}=${answer.reason}`);
    }
    const decided = Object.entries(request.decisions);
    const lines: string[] = [];
    const captured: Output = {
      out: (line) => lines.push(line),
      error: (line) => lines.push(line),
      colour: false,
    };
    const finished = resumeCommand(
      {
        runId: request.runId,
        ...(agentFile === undefined ? {} : { agentFile: relative(context.workingDirectory, agentFile) }),
        approve,
        reject,
        execute: decided.filter(([, decision]) => decision === 'execute').map(([key]) => key),
        abandon: decided.filter(([, decision]) => decision === 'abandon').map(([key]) => key),
        allowedKeyHosts,
        trust,
        json: true,
        workingDirectory: context.workingDirectory,
        environment: context.environment,
        // Stopping the dashboard must not cancel the runs it resumed: they finish, or stay resumable.
        signal: new AbortController().signal,
      },
      store,
      captured,
    ).then((): ResumeOutcome => {
      const result = JSON.parse(lines.join('\n')) as ResumeOutcome;
      return { status: result.status, stopReason: result.stopReason };
    });
    return { finished };
  };
}

async function agentFilesByName(
  files: readonly string[],
  workingDirectory: string,
  allowedKeyHosts: readonly string[],
  trust: TrustFlags,
): Promise<Map<string, string>> {
  const byName = new Map<string, string>();
  for (const file of files) {
    const path = resolve(workingDirectory, file);
    const agent = await loadAgentFile(path, BUILTIN_TOOL_NAMES, { allowedKeyHosts, ...trust });
    const known = byName.get(agent.name);
    if (known !== undefined && known !== path) {
      throw new KeelError(
        'config.invalid',
        `Two --agent files name the agent "${agent.name}": ${known} and ${path}`,
      );
    }
    byName.set(agent.name, path);
  }
  return byName;
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

function parse(argv: readonly string[]) {
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: { ...DASHBOARD_OPTIONS, help: { type: 'boolean', short: 'h' } },
    });
    if (positionals.length > 0) throw new Error(`unexpected argument ${positionals[0]}`);
    return values;
  } catch (error) {
    throw new KeelError(
      'config.invalid',
      `${(error as Error).message}; ${USAGE_LINE} (keel dashboard --help for the options)`,
    );
  }
}

function portOption(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65_535) {
    throw new KeelError('config.invalid', `--port must be an integer from 0 to 65535, not "${value}"`);
  }
  return port;
}
