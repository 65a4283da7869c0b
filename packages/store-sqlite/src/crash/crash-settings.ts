// How big the crash test is, from the environment, so that CI runs it at its usual size and a person can run it at
// any scale (`npm run crash -- --runs 200`, see crash-command.ts).

/** The crash test's scale. */
export interface CrashSettings {
  /** Seeds every plan and kill moment: one seed, one schedule. `KEEL_CRASH_SEED`, defaults to 4242. */
  seed: number;
  /** Runs driven to their end. `KEEL_CRASH_RUNS`, defaults to 40. */
  runs: number;
  /**
   * Kills the test must reach; more runs are driven while it falls short. `KEEL_CRASH_KILLS`, defaults to 5 per
   * run (200 for 40 runs).
   */
  minKills: number;
  /** Children alive at once. `KEEL_CRASH_PARALLEL`, defaults to 3. */
  parallel: number;
}

/** Reads the settings; a value that is not a whole number in range throws, naming the variable. */
export function crashSettings(environment: Readonly<Record<string, string | undefined>>): CrashSettings {
  const read = (name: string, fallback: number, minimum: number): number => {
    const text = environment[name];
    if (text === undefined || text === '') return fallback;
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value < minimum) {
      throw new Error(`${name} must be a whole number of at least ${minimum}, not "${text}"`);
    }
    return value;
  };
  const runs = read('KEEL_CRASH_RUNS', 40, 1);
  return {
    seed: read('KEEL_CRASH_SEED', 4_242, 0),
    runs,
    minKills: read('KEEL_CRASH_KILLS', 5 * runs, 0),
    parallel: read('KEEL_CRASH_PARALLEL', 3, 1),
  };
}
