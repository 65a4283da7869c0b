import type { AgentFile, ModelEntry } from '@keel/agent-file';
import { keyVariableOf } from '@keel/agent-file';
import { anthropic } from '@keel/anthropic';
import { KeelError, type ModelProvider } from '@keel/core';
import { openai, openaiCompatible, openaiResponses } from '@keel/openai';
import {
  type FaultSchedule,
  parseFaults,
  type SimulatedProvider,
  type SimulatedServer,
  simulated,
} from '@keel/simulated';

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
      // Every simulated model of a file shares one server, speaking the wire of the first one's `api`.
      root = simulated({
        model: entry.name,
        ...(faults === undefined ? {} : { faults }),
        ...(entry.api === undefined ? {} : { api: entry.api }),
      });
      return Object.keys(modelOptions).length === 0 ? root : root.withModel(entry.name, modelOptions);
    }
    return root.withModel(entry.name, modelOptions);
  };
  const build = (entry: ModelEntry, field: string): ModelProvider => {
    if (entry.provider === 'simulated') return simulatedModel(entry);
    const apiKey = apiKeyOf(entry, field, file, options.environment);
    const common = {
      ...(apiKey === undefined ? {} : { apiKey }),
      ...(entry.contextWindowTokens === undefined ? {} : { contextWindowTokens: entry.contextWindowTokens }),
    };
    if (entry.provider === 'anthropic') {
      return anthropic(entry.name, {
        ...common,
        ...(entry.baseUrl === undefined ? {} : { baseUrl: entry.baseUrl }),
      });
    }
    if (entry.api === 'responses') {
      return openaiResponses(entry.name, {
        ...common,
        ...(entry.baseUrl === undefined ? {} : { baseUrl: entry.baseUrl }),
      });
    }
    // With a base URL: any OpenAI-compatible server (Ollama, vLLM, LiteLLM), where a key is optional.
    return entry.baseUrl === undefined
      ? openai(entry.name, common)
      : openaiCompatible({
          baseUrl: entry.baseUrl,
          model: entry.name,
          provider: 'openai-compatible',
          ...common,
        });
  };
  const model = build(primary, 'model');
  const fallbacks = fallbackEntries.map((entry, index) => build(entry, `fallbacks[${index}]`));
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

/**
 * The fault schedules that apply to the simulated models of `file`, for the line a run or a chat starts with: a model's
 * own `faults:` in the file (which wins for that model), then `--faults` (`cliFaults`) for the others; `none` when no
 * schedule applies. For example `sim-primary server_error=0.3,reset=0.1 (agent file)`.
 */
export function faultsSummary(file: AgentFile, cliFaults: string | undefined): string {
  const parts = modelChainOf(file)
    .filter((entry) => entry.provider === 'simulated' && entry.faults !== undefined)
    .map((entry) => `${entry.name} ${entry.faults} (agent file)`);
  if (cliFaults !== undefined && cliFaults.trim() !== '' && cliFaults.trim() !== 'none')
    parts.push(
      parts.length === 0 ? `${cliFaults} (--faults)` : `${cliFaults} (--faults) for the other models`,
    );
  return parts.length === 0 ? 'none' : parts.join(' · ');
}

/**
 * The API key sent with `entry`'s requests (see @keel/agent-file's key-hosts.ts for which variable, and to which host), or undefined
 * when none is sent. A variable that must hold a key and is unset is refused at the field that names it.
 */
function apiKeyOf(
  entry: ModelEntry,
  field: string,
  file: AgentFile,
  environment: NodeJS.ProcessEnv,
): string | undefined {
  const variable = keyVariableOf(entry);
  if (variable === undefined) return undefined;
  const apiKey = environment[variable];
  if (apiKey !== undefined && apiKey !== '') return apiKey;
  const named = entry.apiKeyEnv === undefined ? field : `${field}.apiKeyEnv`;
  const location = file.locations[named] ?? file.locations[field] ?? file.path;
  throw new KeelError(
    'config.invalid',
    `${location}: ${named} needs an API key in the environment variable ${variable}, which is not set`,
    {
      data: { file: file.path, field: named, variable },
      guidance: `Set ${variable}, or use the offline simulated provider (model: "simulated:sim-primary")`,
    },
  );
}

/** The models an agent file's agent uses, primary first: with no model in the file, `sim-primary` then `sim-fallback`. */
export function modelChainOf(file: AgentFile): ModelEntry[] {
  const primary = file.model ?? DEFAULT_MODEL;
  return [
    primary,
    ...(file.model === undefined && file.fallbacks.length === 0 ? [DEFAULT_FALLBACK] : file.fallbacks),
  ];
}
