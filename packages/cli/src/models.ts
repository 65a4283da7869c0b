import { KeelError, type ModelProvider } from '@keel/core';
import { anthropic } from '@keel/anthropic';
import { openai, openaiCompatible } from '@keel/openai';
import {
  type FaultSchedule,
  parseFaults,
  type SimulatedProvider,
  simulated,
  type SimulatedServer,
} from '@keel/simulated';
import type { AgentFile, ModelEntry } from './agent-file.js';

/** The models of an agent file, made into providers; `close` stops the simulated server if one was started. */
export interface ResolvedModels {
  model: ModelProvider;
  fallbacks: ModelProvider[];
  /** Whether any model runs on the offline simulated provider. */
  simulated: boolean;
  server(): Promise<SimulatedServer | undefined>;
  close(): Promise<void>;
}

/** What the command line adds to the file: the simulated fault schedule and its seed. */
export interface SimulationOptions {
  faults?: string;
  seed?: number;
  environment: NodeJS.ProcessEnv;
}

const DEFAULT_MODEL: ModelEntry = { provider: 'simulated', name: 'sim-primary' };
const DEFAULT_FALLBACK: ModelEntry = { provider: 'simulated', name: 'sim-fallback' };

/**
 * Builds the providers an agent file names. With no model in the file, the agent runs offline on the simulated
 * provider (`sim-primary`, falling back to `sim-fallback`). Every simulated model shares one in-process server.
 */
export function resolveModels(file: AgentFile, options: SimulationOptions): ResolvedModels {
  const primary = file.model ?? DEFAULT_MODEL;
  const fallbackEntries =
    file.model === undefined && file.fallbacks.length === 0 ? [DEFAULT_FALLBACK] : file.fallbacks;
  const faults = options.faults === undefined ? undefined : parseFaults(options.faults);
  if (faults !== undefined && options.seed !== undefined) {
    faults.default = { ...faults.default, seed: options.seed };
    for (const name of Object.keys(faults.models))
      faults.models[name] = { ...faults.models[name]!, seed: options.seed };
  }
  let root: SimulatedProvider | undefined;
  const simulatedModel = (entry: ModelEntry): SimulatedProvider => {
    const modelOptions: { faults?: FaultSchedule; contextWindowTokens?: number } = {};
    if (entry.faults !== undefined) {
      const parsed = parseFaults(entry.faults).default;
      modelOptions.faults = options.seed === undefined ? parsed : { ...parsed, seed: options.seed };
    }
    if (entry.contextWindowTokens !== undefined) modelOptions.contextWindowTokens = entry.contextWindowTokens;
    if (root === undefined) {
      root = simulated({ model: entry.name, ...(faults === undefined ? {} : { faults }) });
      return Object.keys(modelOptions).length === 0 ? root : root.withModel(entry.name, modelOptions);
    }
    return root.withModel(entry.name, modelOptions);
  };
  const build = (entry: ModelEntry): ModelProvider => {
    switch (entry.provider) {
      case 'simulated':
        return simulatedModel(entry);
      case 'openai':
        return buildOpenAI(entry, options.environment);
      case 'anthropic':
        return anthropic(entry.name, {
          ...apiKeyOption(entry, options.environment, 'ANTHROPIC_API_KEY'),
          ...(entry.baseUrl === undefined ? {} : { baseUrl: entry.baseUrl }),
          ...(entry.contextWindowTokens === undefined
            ? {}
            : { contextWindowTokens: entry.contextWindowTokens }),
        });
    }
  };
  const model = build(primary);
  const fallbacks = fallbackEntries.map(build);
  return {
    model,
    fallbacks,
    simulated: root !== undefined,
    server: async () => (root === undefined ? undefined : root.server()),
    close: async () => {
      await root?.close();
    },
  };
}

function buildOpenAI(entry: ModelEntry, environment: NodeJS.ProcessEnv): ModelProvider {
  const common = {
    ...(entry.contextWindowTokens === undefined ? {} : { contextWindowTokens: entry.contextWindowTokens }),
  };
  if (entry.baseUrl !== undefined) {
    // Any OpenAI-compatible server (Ollama, vLLM, LiteLLM): a key is optional there.
    const key = environment[entry.apiKeyEnv ?? 'OPENAI_API_KEY'];
    return openaiCompatible({
      baseUrl: entry.baseUrl,
      model: entry.name,
      provider: 'openai-compatible',
      ...(key === undefined ? {} : { apiKey: key }),
      ...common,
    });
  }
  return openai(entry.name, { ...apiKeyOption(entry, environment, 'OPENAI_API_KEY'), ...common });
}

function apiKeyOption(
  entry: ModelEntry,
  environment: NodeJS.ProcessEnv,
  defaultVariable: string,
): { apiKey: string } {
  const variable = entry.apiKeyEnv ?? defaultVariable;
  const apiKey = environment[variable];
  if (apiKey === undefined || apiKey === '') {
    throw new KeelError(
      'config.invalid',
      `The ${entry.provider} model ${entry.name} needs an API key in the environment variable ${variable}`,
      { guidance: `Set ${variable}, or use the offline simulated provider (model: "simulated:sim-primary")` },
    );
  }
  return { apiKey };
}

/** The models an agent file's agent uses, primary first: with no model in the file, `sim-primary` then `sim-fallback`. */
export function modelChainOf(file: AgentFile): ModelEntry[] {
  const primary = file.model ?? DEFAULT_MODEL;
  return [
    primary,
    ...(file.model === undefined && file.fallbacks.length === 0 ? [DEFAULT_FALLBACK] : file.fallbacks),
  ];
}
