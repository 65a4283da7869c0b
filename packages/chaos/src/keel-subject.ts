import {
  type Agent,
  agentTool,
  handoff,
  KeelError,
  type ModelProvider,
  type RunResult,
  type Tool,
} from '@keel/core';
import { openaiCompatible } from '@keel/openai';
import {
  type BreakerMoveRecord,
  CHILD_TOOL,
  type ChaosEnvironment,
  type ChaosModel,
  type ChaosSubject,
  type PreparedSubject,
  type RunEnding,
} from './subject.js';

/** What a keel agent for one scenario is built from. */
export interface KeelAgentParts {
  /** The scenario's models as providers (`simulated/<model>` in reports), primary first. */
  readonly models: readonly [ModelProvider, ...ModelProvider[]];
  /** The scenario: pass the agent's tools through `environment.instrumentTools`, keep stores in its directory. */
  readonly environment: ChaosEnvironment;
  /**
   * Set when the parent of a nested scenario is built: the agent tool that runs the child (`agentTool(child,
   * CHILD_TOOL)`), or in a handoff scenario the handoff to it (`handoff(child, CHILD_TOOL)`, a tool too); give the
   * agent this one tool instead of its own. Defaults to none.
   */
  readonly childTool?: Tool;
}

/** An agent built for one scenario, and what to release afterwards. */
export interface BuiltKeelAgent {
  readonly agent: Agent<unknown>;
  /** Closes what the build opened (its store). Defaults to nothing. */
  close?(): Promise<void>;
}

/** Options of {@link keelSubject}. */
export interface KeelSubjectOptions {
  /** The subject's name in the scorecard. Defaults to `keel`. */
  name?: string;
  /** How many fallback models the agent uses. Defaults to 0. */
  fallbacks?: number;
  /** How to make the same subject in a worker process (the crash scenario). Defaults to none: crash is skipped. */
  worker?: ChaosSubject['worker'];
  /** The only scenarios the subject runs (see `ChaosSubject.scenarios`). Defaults to every scenario. */
  scenarios?: readonly string[];
  /**
   * Builds the agent for one scenario. One agent serves all of a scenario's runs at once, so its breakers span them
   * as they would in a service. In a nested scenario it is called twice: first for the child agent (on the child's
   * models, its tools instrumented as always), then for the parent (on the scenario's models, with `childTool`, the
   * agent tool that runs the child, as its one tool): parent and child share everything else the build sets (limits,
   * retries, store). Required.
   */
  build(parts: KeelAgentParts): BuiltKeelAgent | Promise<BuiltKeelAgent>;
}

/**
 * A keel agent as a chaos subject: each scenario gets a fresh agent (fresh breakers) whose models are the scenario's,
 * spoken to over HTTP by `@keel/openai`'s `openaiCompatible`, exactly as a hosted model would be. Durable agents (built
 * with a store) resume after the crash scenario's kill.
 *
 * @example
 *   const subject = keelSubject({
 *     fallbacks: 1,
 *     build: ({ models: [model, ...fallbacks], environment }) => ({
 *       agent: agent({ model, fallbacks, tools: environment.instrumentTools([weather]) }),
 *     }),
 *   });
 */
export function keelSubject(options: KeelSubjectOptions): ChaosSubject {
  if (typeof options?.build !== 'function') {
    throw new KeelError(
      'config.invalid',
      'keelSubject(options): build must be a function (parts) => { agent }',
    );
  }
  const fallbacks = options.fallbacks ?? 0;
  if (!Number.isInteger(fallbacks) || fallbacks < 0) {
    throw new KeelError(
      'config.invalid',
      `keelSubject(options): fallbacks must be an integer >= 0, got ${fallbacks}`,
    );
  }
  return {
    name: options.name ?? 'keel',
    fallbacks,
    ...(options.worker === undefined ? {} : { worker: options.worker }),
    ...(options.scenarios === undefined ? {} : { scenarios: options.scenarios }),
    nests: true,
    handsOff: true,
    async prepare(environment): Promise<PreparedSubject> {
      const models = providersOf(environment, environment.models);
      const child =
        environment.child === undefined
          ? undefined
          : await options.build({ models: providersOf(environment, environment.child.models), environment });
      const built =
        child === undefined
          ? await options.build({ models, environment })
          : await options.build({
              models,
              environment,
              childTool:
                environment.child?.handoff === true
                  ? handoff(child.agent, { name: CHILD_TOOL.name, description: CHILD_TOOL.description })
                  : agentTool(child.agent, { name: CHILD_TOOL.name, description: CHILD_TOOL.description }),
            });
      return {
        run: async ({ runId, task, signal }) =>
          endingOf(
            await built.agent.run(task, {
              runId,
              signal,
              // Streamed: the answer is consumed as it arrives, and a stream broken mid-answer is recovered.
              ...(environment.stream === true ? { onTextDelta: consumeDelta } : {}),
            }),
          ),
        resume: async ({ runId, signal }) => {
          try {
            return endingOf(await built.agent.resume(runId, { signal }));
          } catch (error) {
            // A run that cannot be resumed (not stored, held by another owner) says so with a code.
            if (KeelError.isInstance(error)) {
              return { status: 'failed', code: error.code, message: error.message, typed: true };
            }
            throw error;
          }
        },
        close: async () => {
          await built.close?.();
          await child?.close?.();
        },
      };
    },
  };
}

/** `models` as providers of `@keel/openai`'s `openaiCompatible` on the scenario's server (`simulated/<model>`). */
function providersOf(
  environment: ChaosEnvironment,
  models: readonly ChaosModel[],
): [ModelProvider, ...ModelProvider[]] {
  const [primary, ...rest] = models.map((model) =>
    openaiCompatible({
      baseUrl: environment.baseUrl,
      model: model.name,
      provider: 'simulated',
      ...(model.contextWindowTokens === undefined ? {} : { contextWindowTokens: model.contextWindowTokens }),
    }),
  );
  if (primary === undefined) throw new KeelError('config.invalid', 'a chaos environment needs a model');
  return [primary, ...rest];
}

/** A streamed run's consumer: the chaos suite reads the final answer, not the deltas. */
function consumeDelta(): void {}

/** A keel run's result as a run ending. */
export function endingOf(result: RunResult<unknown>): RunEnding {
  const moves: BreakerMoveRecord[] = result.report.breakerTransitions
    .filter((move) => move.target === 'model')
    .map((move) => ({ atMs: move.atMs, model: move.name.slice(move.name.indexOf('/') + 1), to: move.to }));
  const typed = result.status === 'completed' || KeelError.isInstance(result.error);
  return {
    status: result.status,
    ...(typeof result.output === 'string' ? { output: result.output } : {}),
    ...(result.error === undefined ? {} : { code: result.error.code, message: result.error.message }),
    typed,
    breakerMoves: moves,
  };
}
