import { join } from 'node:path';
import { EffectLedger } from './effect-ledger.js';
import type { ToolFaults } from './scenario.js';
import { seedOf } from './seeds.js';
import type { ChaosEnvironment, ChaosModel } from './subject.js';
import { instrumentTools } from './tool-faults.js';

/** What a chaos environment is made of: plain JSON, so that a worker process can make the same one. */
export interface EnvironmentSpec {
  readonly scenario: string;
  readonly baseUrl: string;
  readonly models: readonly ChaosModel[];
  readonly directory: string;
  readonly seed: number;
  readonly toolFaults?: ToolFaults;
  /** Whether the subject runs streamed. Defaults to false. */
  readonly stream?: boolean;
  /** The child agent's models in a nested scenario. Defaults to none: one agent. */
  readonly childModels?: readonly ChaosModel[];
  /** Whether the parent of a nested scenario hands the conversation over to the child. Defaults to false. */
  readonly handoff?: boolean;
}

/** The effect ledger of an environment: one file in its directory, shared by its workers. */
export function ledgerOf(spec: Pick<EnvironmentSpec, 'directory'>): EffectLedger {
  return new EffectLedger(join(spec.directory, 'effects.jsonl'));
}

/** The environment `spec` describes; `onEffect` hears of each completed tool call. */
export function environmentOf(
  spec: EnvironmentSpec,
  onEffect?: (runId: string, tool: string) => void,
): ChaosEnvironment {
  const ledger = ledgerOf(spec);
  const seed = seedOf(spec.seed, spec.scenario, 'tools');
  return {
    scenario: spec.scenario,
    baseUrl: spec.baseUrl,
    models: spec.models,
    directory: spec.directory,
    stream: spec.stream === true,
    ...(spec.childModels === undefined
      ? {}
      : { child: { models: spec.childModels, handoff: spec.handoff === true } }),
    instrumentTools: (tools) =>
      instrumentTools(tools, {
        faults: spec.toolFaults,
        seed,
        ledger,
        ...(onEffect === undefined ? {} : { onEffect }),
      }),
  };
}
