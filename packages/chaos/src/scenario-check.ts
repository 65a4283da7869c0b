import { rejectUnknownOptions, throwOptionError } from '@keel/core/adapter';
import { type FaultSchedule, validateFaultSchedule, validateOutages } from '@keel/simulated';
import type { ChaosScenario, GoalName, ModelFaults, ScenarioQuota, ToolFaults } from './scenario.js';

const SCENARIO_KEYS = Object.keys({
  name: true,
  title: true,
  description: true,
  primary: true,
  fallbacks: true,
  child: true,
  handoff: true,
  fallbacksOffered: true,
  tightContextWindow: true,
  tools: true,
  recallFailedCalls: true,
  crash: true,
  quota: true,
  workers: true,
  stream: true,
  arrivalMs: true,
  minimum: true,
  goals: true,
} satisfies Record<keyof ChaosScenario, true>);

const MODEL_KEYS = Object.keys({
  rates: true,
  outages: true,
  retryAfterMs: true,
  hangMs: true,
} satisfies Record<keyof ModelFaults, true>);

const TOOL_KEYS = Object.keys({
  failRate: true,
  hangRate: true,
  timeoutAfterEffectRate: true,
} satisfies Record<keyof ToolFaults, true>);

const GOALS = Object.keys({
  completion: true,
  amplification: true,
  probes: true,
  duplicates: true,
  typed: true,
  refusals: true,
} satisfies Record<GoalName, true>);

const QUOTA_KEYS = Object.keys({
  requestsPerWindow: true,
  tokensPerWindow: true,
  windowMs: true,
} satisfies Record<keyof ScenarioQuota, true>);

/** The most worker processes a scenario may ask for. */
const MAX_WORKERS = 16;

/** What a scenario's name must look like: it is typed in `--scenarios`. */
export const SCENARIO_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks a scenario definition from outside (a scenarios file): every field of {@link ChaosScenario} with its type
 * and range, no unknown field. Throws a `config.invalid` KeelError naming the field and what to write instead.
 */
export function checkScenario(value: unknown, where: string): ChaosScenario {
  if (!isObject(value))
    throwOptionError({
      where: 'scenario',
      option: 'options',
      message: `${where} must be a scenario object such as { name, title, description, ... }`,
      prefixWhere: false,
    });
  rejectUnknownOptions(value, SCENARIO_KEYS, { where: where });
  const { name, title, description, arrivalMs, minimum, goals } = value;
  if (typeof name !== 'string' || !SCENARIO_NAME_PATTERN.test(name)) {
    throwOptionError({
      where: 'scenario',
      option: 'options',
      message: `${where}.name must be 1 to 64 lower-case letters, digits or "-" (such as "slow-search"), got ${JSON.stringify(name)}`,
      prefixWhere: false,
    });
  }
  const at = `${where} ("${name}")`;
  for (const [field, text] of [
    ['title', title],
    ['description', description],
  ] as const) {
    if (typeof text !== 'string' || text.trim() === '')
      throwOptionError({
        where: 'scenario',
        option: 'options',
        message: `${at}: ${field} must be a non-empty string`,
        prefixWhere: false,
      });
  }
  for (const field of [
    'fallbacksOffered',
    'tightContextWindow',
    'recallFailedCalls',
    'crash',
    'stream',
    'handoff',
  ] as const) {
    if (value[field] !== undefined && typeof value[field] !== 'boolean')
      throwOptionError({
        where: 'scenario',
        option: 'options',
        message: `${at}: ${field} must be true or false`,
        prefixWhere: false,
      });
  }
  if (typeof arrivalMs !== 'number' || !Number.isInteger(arrivalMs) || arrivalMs < 0 || arrivalMs > 60_000) {
    throwOptionError({
      where: 'scenario',
      option: 'options',
      message: `${at}: arrivalMs must be an integer number of milliseconds from 0 to 60000, got ${String(arrivalMs)}`,
      prefixWhere: false,
    });
  }
  if (minimum !== 'clean' && minimum !== 'schedule') {
    throwOptionError({
      where: 'scenario',
      option: 'options',
      message: `${at}: minimum must be 'clean' or 'schedule', got ${JSON.stringify(minimum)}`,
      prefixWhere: false,
    });
  }
  if (!Array.isArray(goals) || goals.length === 0 || goals.some((goal) => !GOALS.includes(goal as string))) {
    throwOptionError({
      where: 'scenario',
      option: 'options',
      message: `${at}: goals must be a non-empty array of ${GOALS.map((goal) => `'${goal}'`).join(', ')}`,
      prefixWhere: false,
    });
  }
  if (value.primary !== undefined) checkModelFaults(value.primary, `${at}: primary`);
  if (value.fallbacks !== undefined) checkModelFaults(value.fallbacks, `${at}: fallbacks`);
  if (value.child !== undefined) checkModelFaults(value.child, `${at}: child`);
  if (value.tools !== undefined) checkToolFaults(value.tools, `${at}: tools`);
  if (value.quota !== undefined) checkQuota(value.quota, `${at}: quota`);
  const { workers } = value;
  if (
    workers !== undefined &&
    !(Number.isInteger(workers) && (workers as number) >= 1 && (workers as number) <= MAX_WORKERS)
  ) {
    throwOptionError({
      where: 'scenario',
      option: 'options',
      message: `${at}: workers must be an integer from 1 to ${MAX_WORKERS}, got ${String(workers)}`,
      prefixWhere: false,
    });
  }
  if (workers !== undefined && value.crash === true) {
    throwOptionError({
      where: 'scenario',
      option: 'options',
      message: `${at}: a scenario is either crash: true or runs in workers; remove one of them`,
      prefixWhere: false,
    });
  }
  if (value.handoff === true && value.child === undefined) {
    throwOptionError({
      where: 'scenario',
      option: 'options',
      message: `${at}: handoff: true needs child (the faults of the agent handed to, such as child: {})`,
      prefixWhere: false,
    });
  }
  return Object.freeze({ ...value }) as unknown as ChaosScenario;
}

function checkModelFaults(value: unknown, where: string): void {
  if (!isObject(value))
    throwOptionError({
      where: 'scenario',
      option: 'options',
      message: `${where} must be an object such as { rates: { server_error: 0.1 } }`,
      prefixWhere: false,
    });
  rejectUnknownOptions(value, MODEL_KEYS, { where: where });
  const { outages, ...schedule } = value;
  validateFaultSchedule(schedule as FaultSchedule, where);
  if (outages !== undefined) validateOutages(outages, `${where}.outages`);
}

function checkToolFaults(value: unknown, where: string): void {
  if (!isObject(value))
    throwOptionError({
      where: 'scenario',
      option: 'options',
      message: `${where} must be an object such as { failRate: 0.3 }`,
      prefixWhere: false,
    });
  rejectUnknownOptions(value, TOOL_KEYS, { where: where });
  let total = 0;
  for (const key of TOOL_KEYS) {
    const rate = value[key];
    if (rate === undefined) continue;
    if (typeof rate !== 'number' || !(rate >= 0 && rate <= 1))
      throwOptionError({
        where: 'scenario',
        option: 'options',
        message: `${where}: ${key} must be a number from 0 to 1`,
        prefixWhere: false,
      });
    total += rate;
  }
  if (total > 1 + 1e-9)
    throwOptionError({
      where: 'scenario',
      option: 'options',
      message: `${where}: the rates add up to ${total}, more than 1`,
      prefixWhere: false,
    });
}

function checkQuota(value: unknown, where: string): void {
  if (!isObject(value))
    throwOptionError({
      where: 'scenario',
      option: 'options',
      message: `${where} must be an object such as { requestsPerWindow: 20, tokensPerWindow: 8000, windowMs: 2000 }`,
      prefixWhere: false,
    });
  rejectUnknownOptions(value, QUOTA_KEYS, { where: where });
  for (const key of QUOTA_KEYS) {
    const number = value[key];
    if (typeof number !== 'number' || !Number.isInteger(number) || number < 1)
      throwOptionError({
        where: 'scenario',
        option: 'options',
        message: `${where}: ${key} must be a positive integer, got ${String(number)}`,
        prefixWhere: false,
      });
  }
}
