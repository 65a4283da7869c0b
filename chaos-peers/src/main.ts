// `npm run chaos:peers`: the chaos suite's scenarios, same seeds, same simulated server, driven through keel and its
// peers side by side; prints the combined scorecard (progress on stderr), and writes HTML or JSON when asked.
//
//   node chaos-peers/dist/main.js [--scenarios a,b] [--scenarios-file FILE] [--runs N] [--seed N]
//                                 [--subjects keel,ai-sdk] [--html FILE] [--json] [--help]
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadScenarios, progressLine, renderHtml, renderTable, runChaos, selectScenarios } from '@keel/chaos';
import { defaultChaosTask } from '@keel/cli';
import { type PrivateRedis, startPrivateRedis } from './redis-server.js';
import { createChaosSubject, PEER_KINDS, type PeerKind } from './subjects.js';

const AGENT_FILE = fileURLToPath(new URL('../agent.yaml', import.meta.url));

const HELP = `npm run chaos:peers -- [options]

Runs the chaos suite's scenarios (same seeds, same simulated server on 127.0.0.1) through keel and its peers side by
side, and prints one scorecard. Progress goes to stderr.

Options:
  --scenarios a,b        only these scenarios (default: every one; \`keel chaos --help\` lists them)
  --scenarios-file FILE  scenarios of your own, as \`keel chaos --scenarios-file\` takes them
  --runs N               runs per scenario and subject (default 50)
  --seed N               the seed of the faults (default 1)
  --subjects a,b         some of: ${PEER_KINDS.join(', ')} (default: all)
  --html FILE            also write the scorecard as an HTML page
  --json                 print the report as JSON instead of the table
  --help                 print this help
`;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      scenarios: { type: 'string' },
      'scenarios-file': { type: 'string' },
      runs: { type: 'string' },
      seed: { type: 'string' },
      subjects: { type: 'string' },
      html: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  if (values.help === true) {
    process.stdout.write(HELP);
    return 0;
  }
  const unknown = values.subjects
    ?.split(',')
    .filter((kind) => !(PEER_KINDS as readonly string[]).includes(kind));
  if (unknown !== undefined && unknown.length > 0) {
    process.stderr.write(`unknown subject ${unknown.join(', ')}: choose among ${PEER_KINDS.join(', ')}\n`);
    return 2;
  }
  let kinds = (values.subjects?.split(',') ?? [...PEER_KINDS]) as PeerKind[];
  const task = defaultChaosTask(['get_weather', 'create_ticket']);
  const defined = values['scenarios-file'] === undefined ? [] : await loadScenarios(values['scenarios-file']);
  const scenarios =
    values.scenarios === undefined
      ? defined.length === 0
        ? undefined
        : defined
      : selectScenarios(values.scenarios.split(','), defined).map((scenario) =>
          defined.includes(scenario) ? scenario : scenario.name,
        );
  // keel's fleet subject shares its state through a private Redis, started only when the quota scenario runs.
  let redis: PrivateRedis | undefined;
  if (kinds.includes('keel-pace') && (scenarios === undefined || scenarios.includes('quota'))) {
    try {
      redis = await startPrivateRedis();
    } catch (error) {
      process.stderr.write(`keel-pace left out: no private Redis (${String((error as Error).message)})\n`);
    }
  }
  if (redis === undefined) kinds = kinds.filter((kind) => kind !== 'keel-pace');
  const fleetRedis =
    redis === undefined ? undefined : { redisUrl: redis.url, namespace: `peers${process.pid}` };
  const subjects = await Promise.all(
    kinds.map((kind) =>
      createChaosSubject({
        kind,
        agentFile: AGENT_FILE,
        ...(kind === 'keel-pace' && fleetRedis !== undefined ? { redis: { ...fleetRedis } } : {}),
      }),
    ),
  );
  const started = Date.now();
  const report = await runChaos({
    subjects,
    task,
    ...(scenarios === undefined ? {} : { scenarios }),
    ...(values.runs === undefined ? {} : { runs: Number(values.runs) }),
    ...(values.seed === undefined ? {} : { seed: Number(values.seed) }),
    onScorecard: (card) => process.stderr.write(`${progressLine(card)}\n`),
  }).finally(() => redis?.stop());
  if (values.html !== undefined) {
    await writeFile(values.html, renderHtml(report));
    process.stderr.write(`report written to ${values.html}\n`);
  }
  process.stdout.write(`${values.json === true ? JSON.stringify(report, null, 2) : renderTable(report)}\n`);
  process.stderr.write(`the whole comparison took ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
    process.exitCode = 1;
  },
);
