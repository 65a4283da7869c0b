import { KeelError, type ModelProvider, type ModelRequest, type ModelResponse } from '@keel/core';
import { rejectUnknownOptions } from '@keel/core/adapter';
import { openaiCompatible, openaiResponses } from '@keel/openai';
import type { Brain } from './brain.js';
import type { FaultSchedule } from './faults.js';
import { SIMULATED_MODEL, type SimulatedFaults } from './parse-faults.js';
import { type SimulatedRequestRecord, type SimulatedServer, startSimulatedServer } from './server.js';
import { checkModelOptions, type SimulatedModelOptions, toSimulatedFaults } from './server-options.js';

/** Options of {@link simulated}. */
export interface SimulatedOptions {
  /** The model name sent in requests (it selects per-model faults). Defaults to `sim-primary`. */
  model?: string;
  /**
   * Faults of the server this provider starts, for every model on it; a string is parsed by `parseFaults` (so
   * `'demo'` and `MODEL:` entries work). Defaults to none. Ignored when `server` is given.
   */
  faults?: FaultSchedule | SimulatedFaults | string;
  /** The brain of the server this provider starts. Defaults to `defaultBrain`. Ignored when `server` is given. */
  brain?: Brain;
  /**
   * Called for each request the server this provider starts has decided on (see `SimulatedServerOptions`), for
   * instance to show faults live. Defaults to none. Ignored when `server` is given.
   */
  onRequest?: (record: SimulatedRequestRecord) => void;
  /** This model's context window in tokens: longer prompts get `context_length_exceeded`. Defaults to unlimited. */
  contextWindowTokens?: number;
  /** A running server to use instead of starting one; `close()` then leaves it running. Defaults to none. */
  server?: SimulatedServer;
  /**
   * The wire the provider speaks to the server: OpenAI's Chat Completions (`chat`, through `openaiCompatible`) or
   * its Responses API (`responses`, through `openaiResponses`, reasoning asked for with `reasoningEffort: 'low'`, so
   * that reasoning items travel and come back). Siblings made with `withModel` speak the same. Defaults to `chat`.
   */
  api?: 'chat' | 'responses';
}

/** A simulated model, plus the means to add models on the same server and to stop it. */
export interface SimulatedProvider extends ModelProvider {
  /**
   * A provider for another model on the same server, such as a fallback. `options` configure that model
   * (its own faults, context window, brain); by default it shares the server's.
   */
  withModel(model: string, options?: SimulatedModelOptions): SimulatedProvider;
  /** The server, started on the first call (or the first `generate`) and shared by every `withModel` sibling. */
  server(): Promise<SimulatedServer>;
  /** Stops the server if this provider family started it; a later `generate` starts a fresh one. */
  close(): Promise<void>;
}

// A record over the interface, so that adding an option without listing it here fails to compile.
const KNOWN_OPTIONS = Object.keys({
  model: true,
  faults: true,
  brain: true,
  onRequest: true,
  contextWindowTokens: true,
  server: true,
  api: true,
} satisfies Record<keyof SimulatedOptions, true>);

interface Shared {
  options: SimulatedOptions;
  faults: SimulatedFaults;
  models: Map<string, SimulatedModelOptions>;
  started: Promise<SimulatedServer> | undefined;
  configured: Set<string>;
}

/**
 * A model provider backed by the simulated server, spoken to over real HTTP through `@keel/openai`'s
 * `openaiCompatible`, so every fault travels the same path a hosted model's would. The server starts on first use,
 * on 127.0.0.1, and does not keep the process alive on its own; call `close()` when done.
 *
 * @example
 *   const model = simulated({ faults: 'demo' });
 *   const fallback = model.withModel('sim-fallback');
 *   // agent({ model, fallbacks: [fallback], ... }); then: await model.close();
 */
export function simulated(options: SimulatedOptions = {}): SimulatedProvider {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new KeelError(
      'config.invalid',
      "simulated(): options must be an object such as { faults: 'demo' }",
    );
  }
  rejectUnknownOptions(options, KNOWN_OPTIONS, { where: 'simulated()' });
  if (options.onRequest !== undefined && typeof options.onRequest !== 'function') {
    throw new KeelError(
      'config.invalid',
      'simulated(options): onRequest must be a function (record) => void',
    );
  }
  if (options.server !== undefined && typeof options.server?.url !== 'string') {
    throw new KeelError('config.invalid', 'simulated(options): server must come from startSimulatedServer()');
  }
  if (options.api !== undefined && options.api !== 'chat' && options.api !== 'responses') {
    throw new KeelError(
      'config.invalid',
      `simulated(options): api must be 'chat' or 'responses', got ${String(options.api)}`,
    );
  }
  if (options.brain !== undefined && typeof options.brain !== 'function') {
    throw new KeelError('config.invalid', 'simulated(options): brain must be a function (request) => reply');
  }
  const model = options.model ?? SIMULATED_MODEL;
  const faults = toSimulatedFaults(options.faults);
  const shared: Shared = { options, faults, models: new Map(), started: undefined, configured: new Set() };
  const modelOptions: SimulatedModelOptions = {};
  if (options.contextWindowTokens !== undefined)
    modelOptions.contextWindowTokens = options.contextWindowTokens;
  return member(shared, model, modelOptions);
}

function member(shared: Shared, model: string, modelOptions: SimulatedModelOptions): SimulatedProvider {
  if (typeof model !== 'string' || model.trim() === '') {
    throw new KeelError(
      'config.invalid',
      'simulated: model must be a non-empty model name such as "sim-primary"',
    );
  }
  if (typeof modelOptions !== 'object' || modelOptions === null) {
    throw new KeelError('config.invalid', `simulated: the options of model ${model} must be an object`);
  }
  checkModelOptions(model, modelOptions);
  shared.models.set(model, modelOptions);
  shared.configured.delete(model);
  let client: { url: string; provider: ModelProvider } | undefined;

  const server = async (): Promise<SimulatedServer> => {
    const running = await start(shared);
    if (!shared.configured.has(model)) {
      shared.configured.add(model);
      // A shared server keeps its own settings for a model this provider configures nothing for.
      if (Object.keys(modelOptions).length > 0 || shared.options.server === undefined) {
        running.configureModel(model, modelOptions);
      }
    }
    return running;
  };

  return {
    provider: 'simulated',
    model,
    contextWindowTokens: modelOptions.contextWindowTokens,
    async generate(request: ModelRequest): Promise<ModelResponse> {
      const running = await server();
      if (client?.url !== running.url) {
        const provider =
          shared.options.api === 'responses'
            ? openaiResponses(model, {
                baseUrl: running.url,
                apiKey: 'simulated',
                provider: 'simulated',
                reasoningEffort: 'low',
                contextWindowTokens: modelOptions.contextWindowTokens,
              })
            : openaiCompatible({
                baseUrl: running.url,
                model,
                provider: 'simulated',
                contextWindowTokens: modelOptions.contextWindowTokens,
              });
        client = { url: running.url, provider };
      }
      return client.provider.generate(request);
    },
    withModel: (other, options = {}) => member(shared, other, options),
    server,
    async close() {
      const started = shared.started;
      if (started === undefined || shared.options.server !== undefined) return;
      shared.started = undefined;
      shared.configured.clear();
      await (await started).close();
    },
  };
}

function start(shared: Shared): Promise<SimulatedServer> {
  if (shared.options.server !== undefined) {
    shared.started ??= Promise.resolve(shared.options.server);
    return shared.started;
  }
  shared.started ??= startSimulatedServer({
    faults: shared.faults,
    brain: shared.options.brain,
    onRequest: shared.options.onRequest,
    models: Object.fromEntries(shared.models),
    keepProcessAlive: false,
  }).catch((error: unknown) => {
    shared.started = undefined;
    if (KeelError.isInstance(error)) throw error;
    throw new KeelError('network.connection', `The simulated server could not start: ${String(error)}`, {
      provider: 'simulated',
      cause: error,
    });
  });
  return shared.started;
}
