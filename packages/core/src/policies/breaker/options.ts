// Validation of circuitBreaker()'s options: every mistake is a `config.invalid` naming the option, and the
// defaults documented on CircuitBreakerOptions are applied here.
import { KeelError } from '../../errors/keel-error.js';
import type { CircuitBreakerOptions, OpenDurationOptions } from '../circuit-breaker.js';
import { type Clock, systemClock } from '../clock.js';
import {
  type BreakerRules,
  type BreakerStoreFactory,
  inMemoryBreakerStore,
  type OpenDuration,
} from './breaker-store.js';
import { consecutive } from './consecutive.js';
import { isDependencyFailure } from './failures.js';
import { type BreakerSnapshot, parseBreakerSnapshot } from './snapshot.js';
import {
  describe,
  rejectUnknownOptions,
  requireInteger,
  requireMilliseconds,
  requireOptionsObject,
} from './validate.js';

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

const OWNER = 'circuitBreaker()';

export function resolveBreakerOptions(options: CircuitBreakerOptions): BreakerSettings {
  requireOptionsObject(OWNER, options);
  rejectUnknownOptions(OWNER, options, KNOWN_OPTIONS);
  const name = options.name ?? 'circuit-breaker';
  if (typeof name !== 'string' || name.length === 0) invalid('name', 'a non-empty string', name);
  const strategy = options.strategy ?? consecutive();
  if (typeof strategy !== 'object' || strategy === null || typeof strategy.createWindow !== 'function') {
    invalid('strategy', 'a strategy such as consecutive(), countWindow() or timeWindow()', strategy);
  }
  const openDuration = validateOpenDuration(options.halfOpenAfterMs ?? 30_000);
  const halfOpenMaxProbes = requireInteger(OWNER, 'halfOpenMaxProbes', options.halfOpenMaxProbes ?? 1, 1);
  const probeSuccessesToClose = requireInteger(
    OWNER,
    'probeSuccessesToClose',
    options.probeSuccessesToClose ?? 1,
    1,
  );
  const probeTimeoutMs = requireMilliseconds(
    OWNER,
    'probeTimeoutMs',
    options.probeTimeoutMs ?? Math.max(openDuration.initialMs, 1_000),
    1,
  );
  const slowCallMs =
    options.slowCallMs === undefined
      ? undefined
      : requireMilliseconds(OWNER, 'slowCallMs', options.slowCallMs, 0);
  const isFailure = options.isFailure ?? isDependencyFailure;
  if (typeof isFailure !== 'function') invalid('isFailure', 'a function (error) => boolean', isFailure);
  const store = options.store ?? inMemoryBreakerStore;
  if (typeof store !== 'function') invalid('store', 'a store factory such as inMemoryBreakerStore', store);
  const clock = options.clock ?? systemClock;
  if (typeof clock !== 'object' || clock === null || typeof clock.now !== 'function') {
    invalid('clock', 'a Clock with now(), setTimeout() and clearTimeout()', clock);
  }
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
    const initialMs = requireMilliseconds(OWNER, 'halfOpenAfterMs', value, 0);
    return { initialMs, factor: 1, maxMs: initialMs };
  }
  if (typeof value !== 'object' || value === null) {
    return invalid('halfOpenAfterMs', 'milliseconds or { initialMs, factor, maxMs }', value);
  }
  rejectUnknownOptions(`${OWNER} halfOpenAfterMs`, value, ['initialMs', 'factor', 'maxMs']);
  const initialMs = requireMilliseconds(OWNER, 'halfOpenAfterMs.initialMs', value.initialMs, 0);
  const factor = value.factor ?? 2;
  if (typeof factor !== 'number' || !Number.isFinite(factor) || factor < 1) {
    invalid('halfOpenAfterMs.factor', 'a finite number >= 1', factor);
  }
  const maxMs = requireMilliseconds(
    OWNER,
    'halfOpenAfterMs.maxMs',
    value.maxMs ?? Math.max(initialMs, 300_000),
    initialMs,
  );
  return { initialMs, factor, maxMs };
}

function invalid(option: string, expected: string, got: unknown): never {
  throw new KeelError('config.invalid', `${OWNER}: ${option} must be ${expected}, got ${describe(got)}`, {
    data: { option },
  });
}
