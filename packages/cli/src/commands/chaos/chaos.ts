import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadAgentFile, parseAllowedHost, trustFlagsOf } from '@keel/agent-file';
import {
  type ChaosScenario,
  loadScenarios,
  progressLine,
  renderHtml,
  renderTable,
  runChaos,
  SCENARIOS,
  selectScenarios,
} from '@keel/chaos';
import { KeelError } from '@keel/core';
import { optionError } from '@keel/core/adapter';
import { BUILTIN_TOOL_NAMES } from '../../builtin-tools/builtin-tools.js';
import { type Output, paint } from '../../output/output.js';
import { parsedArguments } from '../command-arguments.js';
import { TRUST_OPTIONS, TRUST_USAGE } from '../trust-options.js';
import { agentFileSubject, defaultChaosTask } from './chaos-subject.js';

/** What `keel chaos` runs with, besides its arguments. */
export interface ChaosCommandContext {
  output: Output;
  workingDirectory: string;
  /** Cancels the suite (Ctrl-C). */
  signal: AbortSignal;
}

/** `keel chaos --help`. */
export const CHAOS_USAGE = `keel chaos: run an agent file through seeded failure scenarios and score it

usage:
  keel chaos <agent.yaml> [--scenarios a,b] [--scenarios-file FILE] [--runs N] [--seed N] [--task TEXT]
             [--html report.html] [--json]
             [--allow-host HOST]... [--allow-programs] [--allow-env NAME]... [--allow-key-host HOST]...

The agent is built as keel run builds it (its retry, fallback, limit and tool settings are what is measured), with
its models replaced by models of the offline simulated provider, which injects each scenario's faults. All runs of a
scenario are under way at once; a run still going after 30 s is given up on and counted hung.

options:
  --scenarios a,b  which scenarios (default: all built-in ones, or the file's with --scenarios-file)
  --scenarios-file FILE
                   your own scenarios: a JavaScript module (a path, or a package) exporting \`scenarios\`, an array
                   of scenario definitions (see packages/chaos/README.md); it runs with your rights
  --runs N         runs per scenario (default: 50)
  --seed N         seed of every fault schedule, tool fault and kill (default: 1)
  --task TEXT      the task of every run (default: one that calls the agent's weather and ticket tools)
  --html FILE      also write a self-contained HTML report with charts
  --json           print the report as JSON instead of the table
  --allow-key-host HOST
                   as for keel run
${TRUST_USAGE}

scenarios:
${SCENARIOS.map((scenario) => `  ${scenario.name.padEnd(21)} ${scenario.title}`).join('\n')}

Progress goes to stderr, one line per scenario; the table (or JSON) to stdout.
exit codes: 0 every goal that was exercised was met, 1 a goal was missed, 2 invalid input, 130 cancelled`;

/** The options of `keel chaos`, for `parseArgs`. */
export const CHAOS_OPTIONS = {
  scenarios: { type: 'string' },
  'scenarios-file': { type: 'string' },
  runs: { type: 'string' },
  seed: { type: 'string' },
  task: { type: 'string' },
  html: { type: 'string' },
  json: { type: 'boolean' },
  'allow-key-host': { type: 'string', multiple: true },
  ...TRUST_OPTIONS,
} as const;

/** `keel chaos <agent.yaml>`: scores the agent file's agent in each scenario. */
export async function chaosCommand(argv: readonly string[], context: ChaosCommandContext): Promise<number> {
  const { output } = context;
  const { values, positionals } = parse(argv);
  if (values.help === true) {
    output.out(CHAOS_USAGE);
    return 0;
  }
  const [file, ...extra] = positionals;
  if (file === undefined || extra.length > 0) {
    throw new KeelError('config.invalid', 'usage: keel chaos <agent.yaml> [options]; run keel chaos --help');
  }
  const defined =
    values['scenarios-file'] === undefined
      ? []
      : await loadScenarios(values['scenarios-file'], context.workingDirectory);
  const scenarios = scenarioList(values.scenarios, defined);
  const runs =
    values.runs === undefined ? 50 : integerFlag(values.runs, { flag: '--runs', min: 1, max: 10_000 });
  const seed =
    values.seed === undefined
      ? 1
      : integerFlag(values.seed, { flag: '--seed', min: 0, max: Number.MAX_SAFE_INTEGER });
  const agentFile = resolve(context.workingDirectory, file);
  const trust = trustFlagsOf(values);
  const allowedKeyHosts = (values['allow-key-host'] ?? []).map(parseAllowedHost);
  const agentDefinition = await loadAgentFile(agentFile, BUILTIN_TOOL_NAMES, { ...trust, allowedKeyHosts });
  const builtins = agentDefinition.tools.flatMap((entry) => (entry.kind === 'builtin' ? [entry.name] : []));
  const task = values.task ?? defaultChaosTask(builtins);
  if (task.trim() === '') throw new KeelError('config.invalid', '--task must not be empty');
  output.error(
    paint(
      output,
      'grey',
      `keel chaos ${agentDefinition.name}: ${scenarios?.length ?? SCENARIOS.length} scenarios × ${runs} runs, ` +
        `seed ${seed}, offline simulated provider · task: ${task}`,
    ),
  );
  let report: Awaited<ReturnType<typeof runChaos>>;
  try {
    report = await runChaos({
      subjects: [agentFileSubject(agentDefinition, { agentFile, trust, allowedKeyHosts })],
      task,
      runs,
      seed,
      signal: context.signal,
      onScorecard: (card) => output.error(progressLine(card)),
      ...(scenarios === undefined ? {} : { scenarios }),
    });
  } catch (error) {
    if (!KeelError.isInstance(error) || error.code !== 'run.cancelled') throw error;
    output.error(`${paint(output, 'yellow', error.code)}: ${error.message}`);
    return 130;
  }
  if (values.html !== undefined) {
    const path = resolve(context.workingDirectory, values.html);
    await writeFile(path, renderHtml(report));
    output.error(`report written to ${path}`);
  }
  output.out(values.json === true ? JSON.stringify(report, null, 2) : renderTable(report));
  return report.scorecards.some((card) => card.goals.some((goal) => goal.met === false)) ? 1 : 0;
}

/**
 * The scenarios asked for: `--scenarios` names (built-in ones, or the scenarios file's), or every scenario of the
 * scenarios file, or undefined for every built-in one.
 */
function scenarioList(
  text: string | undefined,
  defined: readonly ChaosScenario[],
): (string | ChaosScenario)[] | undefined {
  if (text === undefined) return defined.length === 0 ? undefined : [...defined];
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  return selectScenarios(names, defined).map((scenario) =>
    defined.includes(scenario) ? scenario : scenario.name,
  );
}

function parse(argv: readonly string[]) {
  return parsedArguments('chaos', () =>
    parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: { ...CHAOS_OPTIONS, help: { type: 'boolean', short: 'h' } },
    }),
  );
}

/** A flag's text as a whole number from `min` to `max`; `config.invalid` (option: the flag) otherwise. */
function integerFlag(value: string, flag: { flag: string; min: number; max: number }): number {
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(parsed) || parsed < flag.min || parsed > flag.max) {
    throw optionError({
      where: 'keel chaos',
      option: flag.flag,
      message: `${flag.flag} must be an integer from ${flag.min} to ${flag.max}, not "${value}"`,
      prefixWhere: false,
    });
  }
  return parsed;
}
