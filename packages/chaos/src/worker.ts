// The worker process of the crash scenario and of the fleet scenarios (`quota`): makes the subject from its module,
// runs (or recovers) the runs it is given, and reports on stdout, one JSON line each, so that the parent can kill it
// mid-run with SIGKILL, or gather what every process of a fleet did.
//
//   node worker.js '<WorkerSpec as JSON>'
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import { environmentOf } from './environment.js';
import type { CreateChaosSubject, PreparedSubject, RunEnding } from './subject.js';
import type { WorkerLine, WorkerSpec } from './worker-protocol.js';

function report(line: WorkerLine): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

async function runOne(
  prepared: PreparedSubject,
  spec: WorkerSpec,
  runId: string,
  signal: AbortSignal,
): Promise<RunEnding> {
  if (spec.mode === 'recover' && prepared.resume !== undefined) {
    const resumed = await prepared.resume({ runId, signal });
    // The killed worker never stored it: a queue would start it afresh.
    if (resumed.code !== 'store.not_found') return resumed;
  }
  return prepared.run({ runId, task: spec.task, signal });
}

/** Resolves at the first line on stdin (the fleet's go), or when stdin ends. */
function lineOnStdin(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.stdin.off('data', onData);
      process.stdin.pause();
      resolve();
    };
    const onData = (chunk: Buffer) => {
      if (chunk.includes(10)) done();
    };
    process.stdin.on('data', onData);
    process.stdin.once('end', done);
  });
}

async function main(argument: string | undefined): Promise<void> {
  if (argument === undefined) throw new Error("usage: worker.js '<WorkerSpec as JSON>'");
  const spec = JSON.parse(argument) as WorkerSpec;
  const url = isAbsolute(spec.module) ? pathToFileURL(spec.module).href : spec.module;
  const loaded = (await import(url)) as { createChaosSubject?: CreateChaosSubject };
  if (typeof loaded.createChaosSubject !== 'function') {
    throw new Error(`${spec.module} has no createChaosSubject export`);
  }
  const subject = await loaded.createChaosSubject(spec.options);
  const environment = environmentOf(spec.environment, (runId, tool) =>
    report({ type: 'effect', runId, tool }),
  );
  const prepared = await subject.prepare(environment);
  report({ type: 'ready', atMs: Date.now() });
  if (spec.waitForGo === true) await lineOnStdin();
  const readyAtMs = Date.now();
  const controller = new AbortController();
  await Promise.all(
    spec.runs.map(async ({ runId, delayMs }) => {
      const waitMs = readyAtMs + delayMs - Date.now();
      if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
      report({ type: 'start', runId, atMs: Date.now() });
      try {
        const ending = await runOne(prepared, spec, runId, controller.signal);
        report({ type: 'end', runId, atMs: Date.now(), ending });
      } catch (error) {
        report({
          type: 'end',
          runId,
          atMs: Date.now(),
          thrown: error instanceof Error ? error.name : typeof error,
        });
      }
    }),
  );
  await prepared.close();
}

// Exits once its lines are written: a keep-alive socket or a timer a subject left behind must not hold the worker.
const exit = (code: number) => process.stdout.write('', () => process.exit(code));
main(process.argv[2]).then(
  () => exit(0),
  (error: unknown) => {
    report({ type: 'error', message: String((error as Error)?.stack ?? error) });
    exit(1);
  },
);
