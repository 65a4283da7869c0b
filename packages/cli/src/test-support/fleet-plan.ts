// The fleet test's settings and its seeded schedule: how many runs and workers, and when workers are killed and
// runs cancelled. A test fixture compiled with the package, not part of its API.

import { mulberry32 } from '@keel/simulated';

/** The fleet test's size, from KEEL_FLEET_* variables (for larger runs than CI's). */
export interface FleetSettings {
  /** Runs submitted (KEEL_FLEET_RUNS). Defaults to 200. */
  runs: number;
  /** Worker processes (KEEL_FLEET_WORKERS). Defaults to 3. */
  workers: number;
  /** SIGKILLs of workers (KEEL_FLEET_KILLS). Defaults to 6. */
  kills: number;
  /** Runs per worker at once (KEEL_FLEET_CONCURRENCY). Defaults to 8. */
  concurrency: number;
  /** Seed of the schedule (KEEL_FLEET_SEED). Defaults to 1. */
  seed: number;
  /** Lease TTL and job lock of the workers (KEEL_FLEET_LEASE_TTL_MS). Defaults to 1_500. */
  leaseTtlMs: number;
}

function integer(environment: NodeJS.ProcessEnv, name: string, fallback: number, minimum: number): number {
  const text = environment[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < minimum)
    throw new Error(`${name} must be an integer >= ${minimum}`);
  return value;
}

export function fleetSettings(environment: NodeJS.ProcessEnv): FleetSettings {
  return {
    runs: integer(environment, 'KEEL_FLEET_RUNS', 200, 1),
    workers: integer(environment, 'KEEL_FLEET_WORKERS', 3, 1),
    kills: integer(environment, 'KEEL_FLEET_KILLS', 6, 0),
    concurrency: integer(environment, 'KEEL_FLEET_CONCURRENCY', 8, 1),
    seed: integer(environment, 'KEEL_FLEET_SEED', 1, 0),
    leaseTtlMs: integer(environment, 'KEEL_FLEET_LEASE_TTL_MS', 1_500, 200),
  };
}

/** A seeded generator (the simulated provider's mulberry32): one seed, one schedule. */
export function seededRandom(seed: number): { next(): number; integer(min: number, max: number): number } {
  const next = mulberry32(seed);
  return { next, integer: (min, max) => min + Math.floor(next() * (max - min + 1)) };
}

const CITIES = ['Oslo', 'Lyon', 'Porto', 'Quito', 'Dakar', 'Perth', 'Turku', 'Cusco'];

/** The task of run `index`: most open a ticket (the side effect) beside a weather lookup; some only look up. */
export function fleetTask(index: number): string {
  const city = CITIES[index % CITIES.length]!;
  return index % 5 === 4 ? `What is the weather in ${city}?` : `Create a ticket about the weather in ${city}`;
}
