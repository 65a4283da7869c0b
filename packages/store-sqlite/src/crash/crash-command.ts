// `npm run crash -- [--nested] [--runs N] [--kills N] [--seed N] [--parallel N]`: the crash test (crash.test.ts) at the scale
// asked for. `--runs 200` drives 200 runs through at least 1,000 SIGKILLs (5 per run unless --kills says otherwise).
// A script of the repository, compiled with the package, not part of its API.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { crashSettings } from './crash-settings.js';

const repository = fileURLToPath(new URL('../../../../', import.meta.url));
const testFiles = {
  flat: fileURLToPath(new URL('../../src/crash/crash.test.ts', import.meta.url)),
  nested: fileURLToPath(new URL('../../src/crash/crash-nested.test.ts', import.meta.url)),
};

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    runs: { type: 'string' },
    kills: { type: 'string' },
    seed: { type: 'string' },
    parallel: { type: 'string' },
    nested: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help === true) {
  console.log(
    'usage: npm run crash -- [--nested] [--runs N (40)] [--kills N (5 per run)] [--seed N (4242)] [--parallel N (3)]',
  );
  process.exit(0);
}
const environment: NodeJS.ProcessEnv = { ...process.env };
for (const [flag, variable] of [
  ['runs', 'KEEL_CRASH_RUNS'],
  ['kills', 'KEEL_CRASH_KILLS'],
  ['seed', 'KEEL_CRASH_SEED'],
  ['parallel', 'KEEL_CRASH_PARALLEL'],
] as const) {
  if (values[flag] !== undefined) environment[variable] = values[flag];
}
if (values.nested === true) environment.KEEL_CRASH_NESTED = '1';
const settings = crashSettings(environment);
console.log(
  `crash test: ${settings.runs} runs, at least ${settings.minKills} kills, seed ${settings.seed}, ${settings.parallel} children at once`,
);
const child = spawn('npx', ['vitest', 'run', values.nested === true ? testFiles.nested : testFiles.flat], {
  cwd: repository,
  env: environment,
  stdio: 'inherit',
});
child.on('close', (code) => {
  process.exitCode = code ?? 1;
});
