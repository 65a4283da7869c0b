import { describe, expect, it } from 'vitest';
import { FAULT_KINDS, planFaults, scheduledFault, validateFaultSchedule } from './faults.js';
import { FAULT_PRESETS, faultsForModel, parseFaults } from './parse-faults.js';
import { mulberry32, randomAt } from './prng.js';

describe('mulberry32', () => {
  it('is deterministic for a seed and differs between seeds', () => {
    const first = mulberry32(42);
    const second = mulberry32(42);
    const sequence = Array.from({ length: 5 }, () => first());
    expect(Array.from({ length: 5 }, () => second())).toEqual(sequence);
    expect(sequence.every((value) => value >= 0 && value < 1)).toBe(true);
    expect(mulberry32(43)()).not.toBe(sequence[0]);
    // Pinned, so a change to the generator (which would change every user's schedule) is caught.
    expect(mulberry32(1)()).toBeCloseTo(0.6270739405881613, 12);
  });

  it('draws the value at an index without depending on earlier draws', () => {
    expect(randomAt(7, 100)).toBe(randomAt(7, 100));
    expect(randomAt(7, 100)).not.toBe(randomAt(7, 101));
  });
});

describe('fault schedules', () => {
  const rates = { rate_limit: 0.2, server_error: 0.1, reset: 0.05 };

  it('gives the same plan for the same seed, another for another seed', () => {
    const plan = planFaults({ seed: 5, rates }, 200);
    expect(planFaults({ seed: 5, rates }, 200)).toEqual(plan);
    expect(planFaults({ seed: 6, rates }, 200)).not.toEqual(plan);
    expect(scheduledFault({ seed: 5, rates }, 150)).toBe(plan[150]);
  });

  it('draws faults close to their rates', () => {
    const plan = planFaults({ seed: 11, rates }, 20_000);
    const share = (kind: string) => plan.filter((fault) => fault === kind).length / plan.length;
    expect(share('rate_limit')).toBeCloseTo(0.2, 1);
    expect(share('server_error')).toBeCloseTo(0.1, 1);
    expect(share('reset')).toBeGreaterThan(0.035);
    expect(share('reset')).toBeLessThan(0.065);
    expect(share('none')).toBeCloseTo(0.65, 1);
  });

  it('plays the explicit sequence first, then the rates', () => {
    const plan = planFaults({ sequence: ['hang', 'none', 'reset'], rates: { server_error: 1 } }, 5);
    expect(plan).toEqual(['hang', 'none', 'reset', 'server_error', 'server_error']);
    expect(planFaults({}, 3)).toEqual(['none', 'none', 'none']);
  });

  it('rejects bad schedules with config.invalid messages that say what to fix', () => {
    const cases: [unknown, RegExp][] = [
      [{ rates: { rate_limit: 0.7, reset: 0.5 } }, /add up to 1\.2, more than 1/],
      [{ rates: { rate_limits: 0.1 } }, /unknown fault kind "rate_limits"/],
      [{ rates: { reset: -0.1 } }, /rate of reset must be a number from 0 to 1/],
      [{ seed: 1.5 }, /seed must be an integer/],
      [{ sequence: ['none', 'boom'] }, /sequence\[1\] is "boom"/],
      [{ retryAfterMs: -5 }, /retryAfterMs must be/],
      ['rate_limit', /must be an object/],
    ];
    for (const [schedule, message] of cases) {
      expect(() => validateFaultSchedule(schedule as never), String(message)).toThrow(message);
      expect(() => validateFaultSchedule(schedule as never)).toThrow(
        expect.objectContaining({ code: 'config.invalid' }),
      );
    }
  });
});

describe('parseFaults', () => {
  it('parses rates, percentages, a seed, a wait and a sequence', () => {
    expect(parseFaults('rate_limit=0.2, server_error=0.1,reset=5%,seed=7,retry_after_ms=250')).toEqual({
      default: { rates: { rate_limit: 0.2, server_error: 0.1, reset: 0.05 }, seed: 7, retryAfterMs: 250 },
      models: {},
    });
    expect(parseFaults('sequence=rate_limit>none>hang').default).toEqual({
      sequence: ['rate_limit', 'none', 'hang'],
    });
  });

  it('applies MODEL: entries to that model only, inheriting seed and wait', () => {
    const faults = parseFaults('seed=9,rate_limit=0.5,llama3:8b:server_error=1,sim-fallback:sequence=none');
    expect(faults.models).toEqual({
      'llama3:8b': { rates: { server_error: 1 } },
      'sim-fallback': { sequence: ['none'] },
    });
    expect(faultsForModel(faults, 'llama3:8b')).toEqual({
      seed: 9,
      retryAfterMs: undefined,
      rates: { server_error: 1 },
    });
    expect(faultsForModel(faults, 'other')).toEqual(faults.default);
    expect(planFaults(faultsForModel(faults, 'sim-fallback'), 3)).toEqual(['none', 'none', 'none']);
  });

  it('expands presets, which later entries override', () => {
    expect(parseFaults('none')).toEqual({ default: {}, models: {} });
    expect(parseFaults('chaos').default.rates).toEqual(FAULT_PRESETS.chaos.default.rates);
    expect(parseFaults('flaky,seed=3').default.seed).toBe(3);
    for (const name of Object.keys(FAULT_PRESETS)) expect(() => parseFaults(name)).not.toThrow();
  });

  it('has a demo preset whose primary model is rate limited, breaks a tool call, then is overloaded', () => {
    const demo = parseFaults('demo');
    expect(planFaults(faultsForModel(demo, 'sim-primary'), 9)).toEqual([
      'rate_limit',
      'invalid_tool_arguments',
      'none',
      'overloaded',
      'overloaded',
      'overloaded',
      'overloaded',
      'overloaded',
      'none',
    ]);
    expect(planFaults(faultsForModel(demo, 'sim-fallback'), 5)).toEqual(Array(5).fill('none'));
  });

  it('rejects bad text with config.invalid naming the entry and the problem', () => {
    const cases: [string, RegExp][] = [
      ['', /it is empty/],
      ['rate_limit=0.2,,reset=0.1', /an entry is empty/],
      ['rate_limit', /"rate_limit" is not a preset .*did you mean rate_limit=RATE\?/],
      ['demos', /"demos" is not a preset \(none, demo, flaky, chaos\)/],
      ['rate_limit=1.5', /rate of rate_limit must be from 0 to 1 .*got "1\.5"/],
      ['rate_limit=abc', /got "abc"/],
      ['reset=150%', /got "150%"/],
      ['timeout=0.1', /"timeout" is neither a fault kind \(none, rate_limit, .*\) nor a setting/],
      ['seed=x', /seed must be an integer/],
      ['retry_after_ms=-1', /retry_after_ms must be a number/],
      ['sequence=none>boom', /"boom" in the sequence is not a fault kind/],
      ['rate_limit=0.6,server_error=0.6', /add up to 1\.2/],
      [':reset=0.1', /model name before ":" is empty/],
      ['reset=', /reset has no value/],
    ];
    for (const [text, message] of cases) {
      let caught: unknown;
      try {
        parseFaults(text);
      } catch (error) {
        caught = error;
      }
      expect(caught, text).toMatchObject({ code: 'config.invalid', message: expect.stringMatching(message) });
    }
    expect(() => parseFaults('x=1')).toThrow(
      expect.objectContaining({ guidance: expect.stringContaining('preset') }),
    );
  });
});

it('lists every fault kind once', () => {
  expect(new Set(FAULT_KINDS).size).toBe(FAULT_KINDS.length);
  expect(FAULT_KINDS).toHaveLength(18);
});
