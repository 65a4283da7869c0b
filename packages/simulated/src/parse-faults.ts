import { KeelError } from '@keel/core';
import { optionError } from '@keel/core/adapter';
import {
  FAULT_KINDS,
  type FaultKind,
  type FaultSchedule,
  isFaultKind,
  validateFaultSchedule,
} from './faults.js';

/** The simulated provider's default model name. */
export const SIMULATED_MODEL = 'sim-primary';
/** The model name the presets treat as the fallback. */
export const SIMULATED_FALLBACK_MODEL = 'sim-fallback';

/** Fault schedules for a whole simulated server: one for every model, and overrides for named models. */
export interface SimulatedFaults {
  /** The schedule of models without one of their own. */
  default: FaultSchedule;
  /**
   * Schedules of named models. A model with a schedule of its own uses its own `rates` and `sequence` (no faults
   * when it sets neither) and inherits the default's `seed`, `retryAfterMs` and `hangMs` when it does not set them.
   */
  models: Record<string, FaultSchedule>;
}

/** The named presets accepted by {@link parseFaults}. */
export const FAULT_PRESETS = {
  /** No faults at all. */
  none: { default: {}, models: {} },
  /**
   * Shows off a retry, a correction and a fallback on a one-tool task. The primary model is rate limited once
   * (retried), then makes a tool call with invalid JSON arguments (the run loop returns the error and the model
   * corrects itself), then is overloaded five times in a row, so retries run out and the fallback model answers.
   */
  demo: {
    default: {},
    models: {
      [SIMULATED_MODEL]: {
        retryAfterMs: 250,
        sequence: [
          'rate_limit',
          'invalid_tool_arguments',
          'none',
          'overloaded',
          'overloaded',
          'overloaded',
          'overloaded',
          'overloaded',
        ],
      },
      [SIMULATED_FALLBACK_MODEL]: {},
    },
  },
  /** A few transient faults: what a busy hosted API looks like. */
  flaky: {
    default: { seed: 1, rates: { rate_limit: 0.1, overloaded: 0.05, server_error: 0.05, reset: 0.03 } },
    models: {},
  },
  /** Every fault kind, often: for `keel chaos`. */
  chaos: {
    default: {
      seed: 1,
      rates: {
        rate_limit: 0.12,
        server_error: 0.08,
        bad_gateway: 0.04,
        unavailable: 0.04,
        overloaded: 0.05,
        hang: 0.02,
        reset: 0.05,
        truncated_json: 0.03,
        malformed_json: 0.03,
        invalid_tool_arguments: 0.05,
        unknown_tool: 0.03,
        max_tokens: 0.02,
      },
    },
    models: {},
  },
} as const satisfies Record<string, SimulatedFaults>;

/** The name of a fault preset. */
export type FaultPresetName = keyof typeof FAULT_PRESETS;

const SETTINGS = 'seed, retry_after_ms, hang_ms, sequence';

function faultScheduleError(text: string, entry: string, problem: string): KeelError {
  return optionError({
    where: 'parseFaults',
    option: 'faults',
    message: `Invalid fault schedule "${text}": ${problem} (in "${entry}")`,
    prefixWhere: false,
    data: { faults: text, entry },
    guidance:
      'Write comma-separated entries: a preset (none, demo, flaky, chaos), KIND=RATE with a rate from 0 to 1 ' +
      '(such as rate_limit=0.2 or reset=5%), seed=N, retry_after_ms=N, hang_ms=N, sequence=KIND>KIND>...; ' +
      'prefix an entry with MODEL: to apply it to one model only (sim-primary:server_error=1).',
  });
}

/**
 * Parses a fault schedule as written on the command line: comma-separated entries, each a preset name (`none`,
 * `demo`, `flaky`, `chaos`), `KIND=RATE` (a probability from 0 to 1, or a percentage), `seed=N`,
 * `retry_after_ms=N`, `hang_ms=N`, or `sequence=KIND>KIND>...`; an entry prefixed with `MODEL:` applies to that model only.
 * Later entries override earlier ones. Throws a `config.invalid` KeelError saying which entry is wrong and why.
 *
 * @example
 *   parseFaults('rate_limit=0.2,server_error=0.1,reset=0.05,seed=7');
 *   parseFaults('demo');
 *   parseFaults('sim-primary:sequence=server_error>server_error>server_error,sim-fallback:rate_limit=0');
 */
export function parseFaults(text: string): SimulatedFaults {
  if (typeof text !== 'string') {
    throw new KeelError('config.invalid', `A fault schedule must be a string, got ${typeof text}`);
  }
  const result: SimulatedFaults = { default: {}, models: {} };
  const entries = text.split(',').map((entry) => entry.trim());
  if (entries.every((entry) => entry === '')) throw faultScheduleError(text, text, 'it is empty');
  for (const entry of entries) {
    if (entry === '') throw faultScheduleError(text, entry, 'an entry is empty (two commas in a row?)');
    const equals = entry.indexOf('=');
    if (equals === -1) {
      applyPreset(result, text, entry);
      continue;
    }
    const target = entry.slice(0, equals).trim();
    const value = entry.slice(equals + 1).trim();
    const colon = target.lastIndexOf(':');
    const model = colon === -1 ? undefined : target.slice(0, colon).trim();
    const key = (colon === -1 ? target : target.slice(colon + 1)).trim();
    if (model === '') throw faultScheduleError(text, entry, 'the model name before ":" is empty');
    if (model !== undefined) result.models[model] ??= {};
    const schedule = model === undefined ? result.default : result.models[model]!;
    applySetting(schedule, key, value, text, entry);
  }
  validateFaultSchedule(result.default, `fault schedule "${text}"`);
  for (const [model, schedule] of Object.entries(result.models)) {
    validateFaultSchedule(schedule, `fault schedule "${text}" for model ${model}`);
  }
  return result;
}

function applyPreset(result: SimulatedFaults, text: string, name: string): void {
  if (!Object.hasOwn(FAULT_PRESETS, name)) {
    const hint = isFaultKind(name) ? `; did you mean ${name}=RATE?` : '';
    throw faultScheduleError(
      text,
      name,
      `"${name}" is not a preset (${Object.keys(FAULT_PRESETS).join(', ')})${hint}`,
    );
  }
  const preset: SimulatedFaults = FAULT_PRESETS[name as FaultPresetName];
  Object.assign(result.default, structuredClone(preset.default));
  for (const [model, schedule] of Object.entries(preset.models)) {
    result.models[model] = { ...result.models[model], ...structuredClone(schedule) };
  }
}

function applySetting(
  schedule: FaultSchedule,
  key: string,
  value: string,
  text: string,
  entry: string,
): void {
  if (value === '') throw faultScheduleError(text, entry, `${key} has no value`);
  if (key === 'seed') {
    const seed = Number(value);
    if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(seed)) {
      throw faultScheduleError(text, entry, `seed must be an integer, got "${value}"`);
    }
    schedule.seed = seed;
  } else if (key === 'retry_after_ms' || key === 'hang_ms') {
    const milliseconds = Number(value);
    if (!/^\d+(\.\d+)?$/.test(value)) {
      throw faultScheduleError(text, entry, `${key} must be a number of milliseconds >= 0, got "${value}"`);
    }
    if (key === 'hang_ms') schedule.hangMs = milliseconds;
    else schedule.retryAfterMs = milliseconds;
  } else if (key === 'sequence') {
    const kinds = value.split('>').map((kind) => kind.trim());
    const unknown = kinds.find((kind) => !isFaultKind(kind));
    if (unknown !== undefined) {
      throw faultScheduleError(
        text,
        entry,
        `"${unknown}" in the sequence is not a fault kind (${kindList()})`,
      );
    }
    schedule.sequence = kinds as FaultKind[];
  } else if (isFaultKind(key)) {
    schedule.rates = { ...schedule.rates, [key]: parseRate(value, text, entry, key) };
  } else {
    throw faultScheduleError(
      text,
      entry,
      `"${key}" is neither a fault kind (${kindList()}) nor a setting (${SETTINGS})`,
    );
  }
}

function parseRate(value: string, text: string, entry: string, kind: string): number {
  const percent = value.endsWith('%');
  const digits = percent ? value.slice(0, -1).trim() : value;
  const rate = /^\d+(\.\d+)?$|^\.\d+$/.test(digits) ? Number(digits) / (percent ? 100 : 1) : Number.NaN;
  if (!(rate >= 0 && rate <= 1)) {
    throw faultScheduleError(
      text,
      entry,
      `the rate of ${kind} must be from 0 to 1 (or 0% to 100%), got "${value}"`,
    );
  }
  return rate;
}

function kindList(): string {
  return FAULT_KINDS.join(', ');
}

/**
 * The schedule that applies to `model`: its own (merged over the default as {@link SimulatedFaults} describes), or
 * the default.
 */
export function faultsForModel(faults: SimulatedFaults, model: string): FaultSchedule {
  const own = Object.hasOwn(faults.models, model) ? faults.models[model] : undefined;
  if (own === undefined) return faults.default;
  const merged: FaultSchedule = {
    seed: own.seed ?? faults.default.seed,
    retryAfterMs: own.retryAfterMs ?? faults.default.retryAfterMs,
  };
  const hangMs = own.hangMs ?? faults.default.hangMs;
  if (hangMs !== undefined) merged.hangMs = hangMs;
  if (own.rates !== undefined) merged.rates = own.rates;
  if (own.sequence !== undefined) merged.sequence = own.sequence;
  return merged;
}
