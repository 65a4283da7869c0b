import type { Clock } from '@keel/core';
import { optionError, rejectUnknownOptions } from '@keel/core/adapter';
import type { Brain } from './brain.js';
import { type FaultSchedule, validateFaultSchedule } from './faults.js';
import { type OutageWindow, validateOutages } from './outages.js';
import { faultsForModel, parseFaults, type SimulatedFaults } from './parse-faults.js';
import type { SimulatedQuota } from './quota.js';
import type { SimulatedRequestRecord } from './server.js';

/** Settings of one model served by the simulated server. */
export interface SimulatedModelOptions {
  /** This model's faults; a string is parsed by `parseFaults` (without `MODEL:` prefixes). Defaults to the server's. */
  faults?: FaultSchedule | string;
  /** Prompts longer than this (four characters a token) get a 400 `context_length_exceeded`. Defaults to the server's. */
  contextWindowTokens?: number;
  /** This model's brain. Defaults to the server's. */
  brain?: Brain;
  /**
   * Stretches of wall time during which this model is down: a request arriving inside one gets the window's fault
   * whatever the schedule says, and its record says `down`. Defaults to none.
   */
  outages?: readonly OutageWindow[];
}

/** Options of {@link startSimulatedServer}. */
export interface SimulatedServerOptions {
  /**
   * Faults of every model: a schedule, the result of `parseFaults`, or a string for it (whose `MODEL:` entries
   * apply to those models). Defaults to none.
   */
  faults?: FaultSchedule | SimulatedFaults | string;
  /** Per-model settings, keyed by the model name in the request. Defaults to none; any model name is served. */
  models?: Record<string, SimulatedModelOptions>;
  /** Decides every answer. Defaults to `defaultBrain`. */
  brain?: Brain;
  /** Context window of models without their own. Defaults to unlimited. */
  contextWindowTokens?: number;
  /** When set, requests must send `Authorization: Bearer <apiKey>` or get a 401. Defaults to accepting any. */
  apiKey?: string;
  /** Port on 127.0.0.1. Defaults to 0 (an ephemeral port). */
  port?: number;
  /**
   * Called for each request once the server has decided what to do with it and started doing it (for `hang`, as
   * soon as it starts hanging). Errors it throws are ignored. Defaults to none.
   */
  onRequest?: (record: SimulatedRequestRecord) => void;
  /** Where the server reads time (outage windows, request times, `hangMs`). Defaults to the system clock. */
  clock?: Clock;
  /**
   * The moment outage windows count from, in milliseconds since the epoch (`clock.now()` time). Defaults to the
   * moment the server started listening.
   */
  epochMs?: number;
  /**
   * Whether the listening server keeps the Node process alive. Defaults to true; the `simulated` provider sets
   * false, so a forgotten `close()` does not hold a CLI open (requests in flight still do).
   */
  keepProcessAlive?: boolean;
  /** Rate limits per API key, enforced with OpenAI's 429 and headers (see {@link SimulatedQuota}). Defaults to none. */
  quota?: SimulatedQuota;
}

/** A model's settings with defaults resolved. */
export interface ResolvedModel {
  faults: FaultSchedule;
  outages: readonly OutageWindow[] | undefined;
  contextWindowTokens: number | undefined;
  brain: Brain | undefined;
}

// Records over the interfaces, so that adding an option without listing it here fails to compile.
const MODEL_OPTIONS = Object.keys({
  faults: true,
  contextWindowTokens: true,
  brain: true,
  outages: true,
} satisfies Record<keyof SimulatedModelOptions, true>);
const SERVER_OPTIONS = Object.keys({
  faults: true,
  models: true,
  brain: true,
  contextWindowTokens: true,
  apiKey: true,
  port: true,
  onRequest: true,
  clock: true,
  epochMs: true,
  keepProcessAlive: true,
  quota: true,
} satisfies Record<keyof SimulatedServerOptions, true>);

/** Reads `faults` (any accepted form) into per-model schedules. */
export function toSimulatedFaults(
  faults: FaultSchedule | SimulatedFaults | string | undefined,
): SimulatedFaults {
  if (faults === undefined) return { default: {}, models: {} };
  if (typeof faults === 'string') return parseFaults(faults);
  if (typeof faults !== 'object' || faults === null)
    throw optionError({
      where: 'simulatedServer',
      option: 'faults',
      message: 'faults must be a string, a schedule or parseFaults output',
      prefixWhere: false,
    });
  if ('default' in faults && 'models' in faults) {
    validateFaultSchedule(faults.default, 'faults.default');
    for (const [model, schedule] of Object.entries(faults.models))
      validateFaultSchedule(schedule, `faults.models.${model}`);
    return faults;
  }
  return { default: validateFaultSchedule(faults as FaultSchedule, 'faults'), models: {} };
}

/** Checks one model's options, returning its schedule (when it has one). */
export function checkModelOptions(name: string, options: SimulatedModelOptions): FaultSchedule | undefined {
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw optionError({
      where: 'simulatedServer',
      option: 'models',
      message: `models.${name} must be an object such as { faults: 'reset=0.1' }`,
      prefixWhere: false,
    });
  rejectUnknownOptions(options, MODEL_OPTIONS, { where: `models.${name}` });
  checkWindow(options.contextWindowTokens, `models.${name}.contextWindowTokens`);
  if (options.brain !== undefined && typeof options.brain !== 'function') {
    throw optionError({
      where: 'simulatedServer',
      option: 'models',
      message: `models.${name}.brain must be a function (request) => reply`,
      prefixWhere: false,
    });
  }
  if (options.outages !== undefined) validateOutages(options.outages, `models.${name}.outages`);
  if (options.faults === undefined) return undefined;
  if (typeof options.faults === 'string') {
    const parsed = parseFaults(options.faults);
    if (Object.keys(parsed.models).length > 0) {
      throw optionError({
        where: 'simulatedServer',
        option: 'models',
        message: `models.${name}.faults applies to ${name} only; remove the MODEL: prefixes from "${options.faults}"`,
        prefixWhere: false,
      });
    }
    return parsed.default;
  }
  return validateFaultSchedule(options.faults, `models.${name}.faults`);
}

/** Checks the server's options and throws a `config.invalid` KeelError naming the bad one. */
export function checkServerOptions(options: SimulatedServerOptions): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw optionError({
      where: 'simulatedServer',
      option: 'startSimulatedServer',
      message: "startSimulatedServer(): options must be an object such as { faults: 'demo' }",
      prefixWhere: false,
    });
  rejectUnknownOptions(options, SERVER_OPTIONS, { where: 'startSimulatedServer()' });
  const { port, brain, apiKey, models } = options;
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port <= 65_535)) {
    throw optionError({
      where: 'simulatedServer',
      option: 'port',
      message: `port must be an integer from 0 to 65535, got ${String(port)}`,
      prefixWhere: false,
    });
  }
  const quota = options.quota;
  if (quota !== undefined) {
    const fields = ['requestsPerWindow', 'tokensPerWindow', 'windowMs'] as const;
    const bad = fields.find((field) => {
      const value = (quota as unknown as Record<string, unknown>)?.[field];
      if (value === undefined && field === 'windowMs') return false;
      return !(typeof value === 'number' && Number.isInteger(value) && value > 0);
    });
    if (typeof quota !== 'object' || quota === null || bad !== undefined)
      throw optionError({
        where: 'simulatedServer',
        option: 'quota',
        message: `quota.${bad ?? 'requestsPerWindow'} must be a positive integer, as in { requestsPerWindow: 500, tokensPerWindow: 200000, windowMs: 60000 }`,
        prefixWhere: false,
      });
  }
  if (brain !== undefined && typeof brain !== 'function')
    throw optionError({
      where: 'simulatedServer',
      option: 'brain',
      message: 'brain must be a function (request) => reply',
      prefixWhere: false,
    });
  if (options.onRequest !== undefined && typeof options.onRequest !== 'function') {
    throw optionError({
      where: 'simulatedServer',
      option: 'onRequest',
      message: 'onRequest must be a function (record) => void',
      prefixWhere: false,
    });
  }
  if (apiKey !== undefined && (typeof apiKey !== 'string' || apiKey === ''))
    throw optionError({
      where: 'simulatedServer',
      option: 'apiKey',
      message: 'apiKey must be a non-empty string',
      prefixWhere: false,
    });
  checkWindow(options.contextWindowTokens, 'contextWindowTokens');
  const { clock, epochMs } = options;
  if (clock !== undefined && (typeof clock?.now !== 'function' || typeof clock.setTimeout !== 'function')) {
    throw optionError({
      where: 'simulatedServer',
      option: 'clock',
      message: 'clock must be a Clock ({ now, setTimeout, clearTimeout }), such as a FakeClock in tests',
      prefixWhere: false,
    });
  }
  if (epochMs !== undefined && !Number.isFinite(epochMs)) {
    throw optionError({
      where: 'simulatedServer',
      option: 'epochMs',
      message: `epochMs must be a number of milliseconds since the epoch, got ${String(epochMs)}`,
      prefixWhere: false,
    });
  }
  if (options.keepProcessAlive !== undefined && typeof options.keepProcessAlive !== 'boolean')
    throw optionError({
      where: 'simulatedServer',
      option: 'keepProcessAlive',
      message: 'keepProcessAlive must be true or false',
      prefixWhere: false,
    });
  if (models !== undefined && (typeof models !== 'object' || models === null || Array.isArray(models))) {
    throw optionError({
      where: 'simulatedServer',
      option: 'models',
      message: 'models must be an object keyed by model name',
      prefixWhere: false,
    });
  }
}

function checkWindow(value: number | undefined, name: string): void {
  if (value !== undefined && !(Number.isInteger(value) && value > 0)) {
    throw optionError({
      where: 'simulatedServer',
      option: 'options',
      message: `${name} must be a positive integer number of tokens, got ${String(value)}`,
      prefixWhere: false,
    });
  }
}

/** The settings that apply to `model`. */
export function resolveModel(
  model: string,
  faults: SimulatedFaults,
  models: ReadonlyMap<string, { options: SimulatedModelOptions; faults: FaultSchedule | undefined }>,
  server: SimulatedServerOptions,
): ResolvedModel {
  const own = models.get(model);
  return {
    faults: own?.faults ?? faultsForModel(faults, model),
    outages: own?.options.outages,
    contextWindowTokens: own?.options.contextWindowTokens ?? server.contextWindowTokens,
    brain: own?.options.brain ?? server.brain,
  };
}
