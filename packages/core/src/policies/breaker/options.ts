// Validation of circuitBreaker()'s options: every mistake is a `config.invalid` naming the option, and the
// defaults documented on CircuitBreakerOptions are applied here.
import { throwOptionError } from '../../options/option-error.js';
import type { CircuitBreakerOptions, OpenDurationOptions } from '../circuit-breaker.js';
import { type Clock, systemClock } from '../clock.js';
import {
  describe,
  isJsonObject,
  rejectUnknownOptions,
  requireClock,
  requireNonNegativeNumber,
  requireOptionsObject,
  requirePositiveInteger,
} from '../validate.js';
import type { BreakerRules, BreakerStoreFactory, OpenDuration } from './breaker-store.js';
import { consecutive } from './consecutive.js';
import { isDependencyFailure } from './failures.js';
import { memoryBreakerStore } from './in-memory-breaker-store.js';
import { type BreakerSnapshot, parseBreakerSnapshot } from './snapshot.js';

const KNOWN_OPTIONS = [
  'name',
  'strategy',
  'halfOpenAfterMs',
  'halfOpenMaxProbes',
  'probeSuccessesToClose',
  'probeTimeoutMs',
  'slowCallMs',
  'isFailure',
  'initialState',
  'store',
  'clock',
];

/** The breaker's options, checked and with every default filled in. */
export interface BreakerSettings {
  name: string;
  clock: Clock;
  slowCallMs: number | undefined;
  isFailure: (error: unknown) => boolean;
  store: BreakerStoreFactory;
  initialState: BreakerSnapshot | undefined;
  rules: BreakerRules;
}

const FACTORY = 'circuitBreaker';

/** Checks `circuitBreaker()`'s options and fills in the defaults documented on {@link CircuitBreakerOptions}. */
export function resolveBreakerOptions(options: CircuitBreakerOptions): BreakerSettings {
  requireOptionsObject(options, FACTORY);
  rejectUnknownOptions(options, KNOWN_OPTIONS, FACTORY);
  const name = options.name ?? 'circuit-breaker';
  if (typeof name !== 'string' || name.length === 0)
    throwOptionError({
      where: FACTORY,
      option: 'name',
      message: `name must be a non-empty string, got ${describe(name)}`,
    });
  const strategy = options.strategy ?? consecutive();
  if (typeof strategy !== 'object' || strategy === null || typeof strategy.createWindow !== 'function') {
    throwOptionError({
      where: FACTORY,
      option: 'strategy',
      message: `strategy must be a strategy such as consecutive(), countWindow() or timeWindow(), got ${describe(strategy)}`,
    });
  }
  const openDuration = validateOpenDuration(options.halfOpenAfterMs ?? 30_000);
  const halfOpenMaxProbes = requirePositiveInteger(
    options.halfOpenMaxProbes ?? 1,
    'halfOpenMaxProbes',
    FACTORY,
  );
  const probeSuccessesToClose = requirePositiveInteger(
    options.probeSuccessesToClose ?? 1,
    'probeSuccessesToClose',
    FACTORY,
  );
  const probeTimeoutMs = milliseconds(
    options.probeTimeoutMs ?? Math.max(openDuration.initialMs, 1_000),
    'probeTimeoutMs',
    1,
  );
  const slowCallMs =
    options.slowCallMs === undefined ? undefined : milliseconds(options.slowCallMs, 'slowCallMs', 0);
  const isFailure = options.isFailure ?? isDependencyFailure;
  if (typeof isFailure !== 'function')
    throwOptionError({
      where: FACTORY,
      option: 'isFailure',
      message: `isFailure must be a function (error) => boolean, got ${describe(isFailure)}`,
    });
  const store = options.store ?? memoryBreakerStore;
  if (typeof store !== 'function')
    throwOptionError({
      where: FACTORY,
      option: 'store',
      message: `store must be a store factory such as memoryBreakerStore, got ${describe(store)}`,
    });
  const clock = requireClock(options.clock ?? systemClock, FACTORY);
  const initialState =
    options.initialState === undefined ? undefined : parseBreakerSnapshot(options.initialState);
  return {
    name,
    clock,
    slowCallMs,
    isFailure,
    store,
    initialState,
    rules: { strategy, openDuration, halfOpenMaxProbes, probeSuccessesToClose, probeTimeoutMs },
  };
}

function validateOpenDuration(value: number | OpenDurationOptions): OpenDuration {
  if (typeof value === 'number') {
    const initialMs = milliseconds(value, 'halfOpenAfterMs', 0);
    return { initialMs, factor: 1, maxMs: initialMs };
  }
  if (!isJsonObject(value)) {
    return throwOptionError({
      where: FACTORY,
      option: 'halfOpenAfterMs',
      message: `halfOpenAfterMs must be milliseconds or { initialMs, factor, maxMs }, got ${describe(value)}`,
    });
  }
  rejectUnknownOptions(value, ['initialMs', 'factor', 'maxMs'], `${FACTORY} halfOpenAfterMs`);
  const initialMs = milliseconds(value.initialMs, 'halfOpenAfterMs.initialMs', 0);
  const factor = value.factor ?? 2;
  if (typeof factor !== 'number' || !Number.isFinite(factor) || factor < 1) {
    throwOptionError({
      where: FACTORY,
      option: 'halfOpenAfterMs.factor',
      message: `halfOpenAfterMs.factor must be a finite number >= 1, got ${describe(factor)}`,
    });
  }
  const maxMs = milliseconds(value.maxMs ?? Math.max(initialMs, 300_000), 'halfOpenAfterMs.maxMs', initialMs);
  return { initialMs, factor, maxMs };
}

/** Open periods and probe deadlines are compared with the clock, never armed as timers: any finite span will do. */
function milliseconds(value: unknown, option: string, minimum: number): number {
  return requireNonNegativeNumber(value, option, FACTORY, { minimum, finite: true });
}
