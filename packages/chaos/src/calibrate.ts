import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeelError } from '@keel/core';
import { completedEffects } from './effect-ledger.js';
import { environmentOf, ledgerOf } from './environment.js';
import { withCap } from './run-scenario.js';
import type { ChaosScenario } from './scenario.js';
import { type Calibration, requestSamples, startScenarioServer } from './scenario-server.js';
import { runIdOf } from './seeds.js';
import type { ChaosSubject } from './subject.js';

const CALIBRATION: ChaosScenario = {
  name: 'calibration',
  title: 'a fault-free run',
  description:
    'One run on a server without faults: the baseline of the minimum requests and of a whole answer.',
  arrivalMs: 0,
  minimum: 'clean',
  goals: [],
};

/** How a calibration run is shaped: one agent, or a parent calling a child as a tool, or handing over to it. */
export type CalibrationShape = 'single' | 'tool' | 'handoff';

const SHAPES: Record<CalibrationShape, ChaosScenario> = {
  single: CALIBRATION,
  tool: { ...CALIBRATION, child: {} },
  handoff: { ...CALIBRATION, child: {}, handoff: true },
};

/** The shape of `scenario`'s runs, which its calibration must have. */
export function shapeOf(scenario: ChaosScenario): CalibrationShape {
  if (scenario.child === undefined) return 'single';
  return scenario.handoff === true ? 'handoff' : 'tool';
}

/**
 * Runs `task` once through `subject` on a server without faults, to learn what a run needs when nothing fails;
 * `shape` runs it as nested scenarios do (a parent agent calling a child agent as a tool, or handing over to it).
 * Throws a `config.invalid` KeelError when that run does not complete: the suite would measure nothing.
 */
export async function calibrate(
  subject: ChaosSubject,
  task: string,
  seed: number,
  capMs: number,
  shape: CalibrationShape = 'single',
): Promise<Calibration> {
  const directory = await mkdtemp(join(tmpdir(), 'keel-chaos-calibration-'));
  const scenario = SHAPES[shape];
  const { server, models, childModels } = await startScenarioServer(scenario, subject, undefined, seed);
  try {
    const spec = {
      scenario: CALIBRATION.name,
      baseUrl: server.url,
      models,
      directory,
      seed,
      ...(childModels === undefined ? {} : { childModels }),
      ...(scenario.handoff === true ? { handoff: true } : {}),
    };
    const prepared = await subject.prepare(environmentOf(spec));
    const started = Date.now();
    const ended = await withCap(
      (signal) => prepared.run({ runId: runIdOf(CALIBRATION.name, seed, 0), task, signal }),
      capMs,
    ).finally(() => prepared.close());
    const durationMs = Date.now() - started;
    if (ended.kind !== 'ended' || ended.ending.status !== 'completed' || ended.ending.output === undefined) {
      const what =
        ended.kind === 'hung'
          ? `did not end within ${capMs} ms`
          : ended.kind === 'threw'
            ? `threw ${String(ended.error)}`
            : `ended ${ended.ending.status}${ended.ending.code === undefined ? '' : ` (${ended.ending.code})`}` +
              (ended.ending.message === undefined ? '' : `: ${ended.ending.message}`);
      throw new KeelError(
        'config.invalid',
        `${subject.name} does not complete the task on a provider without faults` +
          `${shape === 'single' ? '' : ` (nested: ${shape})`}: ` +
          `its run ${what}`,
        {
          guidance:
            'The chaos suite measures every scenario against a fault-free run of the same task; check the agent ' +
            'and the task (--task) with keel run first.',
        },
      );
    }
    const prompts = server.requests.flatMap((record) =>
      record.promptTokens === undefined ? [] : [record.promptTokens],
    );
    const effects = completedEffects(ledgerOf(spec).read());
    return {
      requestsPerRun: requestSamples(server).length,
      effectsPerRun: effects.length,
      tools: [...new Set(effects.map((effect) => effect.tool))].sort(),
      answer: ended.ending.output,
      firstPromptTokens: prompts[0] ?? 0,
      largestPromptTokens: Math.max(0, ...prompts),
      durationMs,
    };
  } finally {
    await server.close();
    await rm(directory, { recursive: true, force: true });
  }
}
