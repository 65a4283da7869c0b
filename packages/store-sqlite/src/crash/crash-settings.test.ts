import { describe, expect, it } from 'vitest';
import { crashSettings } from './crash-settings.js';

describe('crash test settings', () => {
  it('defaults to what CI runs: 40 runs, 200 kills, seed 4242, 3 children', () => {
    expect(crashSettings({})).toEqual({ seed: 4_242, runs: 40, minKills: 200, parallel: 3 });
  });

  it('reads the scale from the environment; the kills follow the runs unless set', () => {
    expect(crashSettings({ KEEL_CRASH_RUNS: '200', KEEL_CRASH_SEED: '7' })).toEqual({
      seed: 7,
      runs: 200,
      minKills: 1_000,
      parallel: 3,
    });
    expect(
      crashSettings({ KEEL_CRASH_RUNS: '10', KEEL_CRASH_KILLS: '0', KEEL_CRASH_PARALLEL: '6' }),
    ).toMatchObject({
      runs: 10,
      minKills: 0,
      parallel: 6,
    });
  });

  it.each([
    ['KEEL_CRASH_RUNS', '0'],
    ['KEEL_CRASH_RUNS', 'lots'],
    ['KEEL_CRASH_KILLS', '-1'],
    ['KEEL_CRASH_SEED', '1.5'],
    ['KEEL_CRASH_PARALLEL', '0'],
  ])('refuses %s=%s, naming the variable', (name, value) => {
    expect(() => crashSettings({ [name]: value })).toThrow(new RegExp(`^${name} must be a whole number`));
  });
});
