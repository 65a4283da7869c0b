// The scorecard's arithmetic on hand-made samples: percentiles, rates, amplification against the minimum, probes while
// down, duplicates, failures by code, goals, and the timeline's bins.
import { describe, expect, it } from 'vitest';
import { answerCheck } from './answer-check.js';
import { canonicalJson, duplicateEffects, type EffectRecord } from './effect-ledger.js';
import { goalSummary, rowOf } from './render-table.js';
import { requireTools, sampleOf, thrownSample } from './run-sample.js';
import { selectScenarios } from './scenarios.js';
import {
  formatPercent,
  IN_FLIGHT_MS,
  minimumRequests,
  probesWhileDown,
  type RequestSample,
  type RunSample,
  type ScenarioObservation,
  scorecardOf,
} from './scorecard.js';
import { percentile, ratio } from './statistics.js';
import { timelineOf } from './timeline.js';

const T0 = 1_700_000_000_000;

describe('percentile', () => {
  it('is the nearest rank: the smallest value with at least that share of the values at or below it', () => {
    const values = [7, 1, 10, 3, 5, 2, 9, 4, 8, 6];
    expect(percentile(values, 0.5)).toBe(5);
    expect(percentile(values, 0.99)).toBe(10);
    expect(percentile(values, 0.1)).toBe(1);
    expect(percentile(values, 1)).toBe(10);
    const hundred = Array.from({ length: 100 }, (_, index) => index + 1);
    expect(percentile(hundred, 0.99)).toBe(99);
    expect(percentile(hundred, 0.5)).toBe(50);
    expect(percentile([42], 0.99)).toBe(42);
    expect(percentile([], 0.5)).toBeUndefined();
    expect(() => percentile(values, 0)).toThrow(RangeError);
    expect(values).toEqual([7, 1, 10, 3, 5, 2, 9, 4, 8, 6]);
  });

  it('ratio is undefined for a zero denominator', () => {
    expect(ratio(3, 4)).toBe(0.75);
    expect(ratio(3, 0)).toBeUndefined();
  });

  it('formats a rate without rounding 99.95% up to a complete 100%', () => {
    expect(formatPercent(0.9995)).toBe('99.9%');
    expect(formatPercent(1)).toBe('100.0%');
    expect(formatPercent(0.12)).toBe('12.0%');
  });
});

describe('minimumRequests', () => {
  it('is what fault-free runs need, plus in expectation one request per faulted request', () => {
    expect(minimumRequests('clean', 50, 2)).toBe(100);
    const schedule = { seed: 1, rates: { server_error: 0.15, overloaded: 0.15 } };
    // 100 clean answers at a fault rate of 30% take 100 / 0.7 = 142.86 requests: 143.
    expect(minimumRequests('schedule', 50, 2, schedule)).toBe(143);
    expect(minimumRequests('schedule', 9, 1, { rates: { reset: 0.1 } })).toBe(10);
    expect(minimumRequests('schedule', 0, 2, schedule)).toBe(0);
    expect(minimumRequests('schedule', 5, 2, {})).toBe(10);
  });
});

function request(
  model: string,
  atMs: number,
  down: boolean,
  fault = down ? 'unavailable' : 'none',
): RequestSample {
  return { model, atMs: T0 + atMs, down, fault };
}

describe('probesWhileDown', () => {
  const window = { model: 'sim-primary', startMs: T0 + 1_000, endMs: T0 + 5_000, fault: 'unavailable' };

  it('counts the requests that reached a down model after its breaker opened, beyond those in flight', () => {
    const requests = [
      request('sim-primary', 1_010, true),
      request('sim-primary', 1_200, true),
      // in flight when the breaker opened at 1 200
      request('sim-primary', 1_200 + IN_FLIGHT_MS, true),
      // probes after the breaker half-opened
      request('sim-primary', 3_000, true),
      request('sim-primary', 3_001, true),
      request('sim-fallback', 3_002, false),
      // after the window
      request('sim-primary', 5_000, false),
    ];
    const moves = [
      { atMs: T0 + 1_200, model: 'sim-primary', to: 'open' as const },
      // the same move seen by two runs
      { atMs: T0 + 1_200, model: 'sim-primary', to: 'open' as const },
      { atMs: T0 + 3_000, model: 'sim-primary', to: 'half-open' as const },
      { atMs: T0 + 3_000, model: 'sim-primary', to: 'half-open' as const },
      { atMs: T0 + 3_005, model: 'sim-primary', to: 'open' as const },
    ];
    expect(probesWhileDown([window], requests, moves)).toEqual({
      afterBreakerOpened: 2,
      halfOpenIntervals: 1,
      inFlightMs: IN_FLIGHT_MS,
    });
    // On a busy event loop a request admitted before the opening arrives later: the allowance grows with the delay.
    const late = [...requests, request('sim-primary', 1_200 + IN_FLIGHT_MS + 250, true)];
    expect(probesWhileDown([window], late, moves)?.afterBreakerOpened).toBe(3);
    expect(probesWhileDown([window], late, moves, IN_FLIGHT_MS + 300)).toEqual({
      afterBreakerOpened: 2,
      halfOpenIntervals: 1,
      inFlightMs: IN_FLIGHT_MS + 300,
    });
  });

  it('is null when no breaker opened during an outage', () => {
    expect(probesWhileDown([window], [request('sim-primary', 1_500, true)], [])).toBeNull();
    const before = [{ atMs: T0 + 500, model: 'sim-primary', to: 'open' as const }];
    expect(probesWhileDown([window], [], before)).toBeNull();
  });
});

describe('duplicate side effects', () => {
  const effect = (
    runId: string,
    tool: string,
    input: unknown,
    idempotent: boolean,
    phase: EffectRecord['phase'] = 'started',
  ): EffectRecord => ({
    phase,
    runId,
    tool,
    key: `${runId}|${tool}|${canonicalJson(input)}`,
    idempotent,
    atMs: T0,
  });

  it('counts each execution of a call of a tool that is not idempotent started after an earlier one had started', () => {
    expect(
      duplicateEffects([
        effect('r1', 'create_ticket', { title: 'a', priority: 'low' }, false),
        // A worker killed here: the effect may or may not have happened; the call started again twice.
        effect('r1', 'create_ticket', { priority: 'low', title: 'a' }, false),
        effect('r1', 'create_ticket', { priority: 'low', title: 'a' }, false, 'completed'),
        effect('r1', 'create_ticket', { title: 'a', priority: 'low' }, false),
        effect('r2', 'create_ticket', { title: 'a', priority: 'low' }, false),
        effect('r1', 'get_weather', { city: 'Paris' }, true),
        effect('r1', 'get_weather', { city: 'Paris' }, true),
      ]),
    ).toBe(2);
  });

  it("does not count a call started again once the tool's reconcile found that its unfinished execution had no effect", () => {
    const keyed = (phase: EffectRecord['phase'], idempotencyKey: string): EffectRecord => ({
      ...effect('r1', 'create_ticket', { title: 'a' }, false, phase),
      idempotencyKey,
    });
    // Killed inside the call; on resume reconcile finds nothing under its key; the call runs again.
    expect(
      duplicateEffects([keyed('started', 'r1:1:0'), keyed('absent', 'r1:1:0'), keyed('started', 'r1:1:0')]),
    ).toBe(0);
    // An execution that completed had its effect, whatever a lookup says later.
    expect(
      duplicateEffects([
        keyed('started', 'r1:1:0'),
        keyed('completed', 'r1:1:0'),
        keyed('absent', 'r1:1:0'),
        keyed('started', 'r1:1:0'),
      ]),
    ).toBe(1);
    // Without a lookup, an unfinished execution may have had its effect.
    expect(duplicateEffects([keyed('started', 'r1:1:0'), keyed('started', 'r1:1:0')])).toBe(1);
  });

  it('canonical JSON sorts keys at every depth and drops undefined properties', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { f: 2, e: 3 }], c: undefined } })).toBe(
      '{"a":{"d":[1,{"e":3,"f":2}]},"b":1}',
    );
  });
});

function run(index: number, outcome: RunSample['outcome'], durationMs: number, code?: string): RunSample {
  return {
    runId: `run-${index}`,
    startedAtMs: T0 + index * 10,
    endedAtMs: T0 + index * 10 + durationMs,
    outcome,
    ...(code === undefined ? {} : { code }),
  };
}

describe('scorecardOf', () => {
  const scenario = selectScenarios(['transient-30'])[0]!;
  const runs: RunSample[] = [
    ...Array.from({ length: 7 }, (_, index) => run(index, 'completed', (index + 1) * 100)),
    run(7, 'failed', 800, 'provider.server_error'),
    run(8, 'untyped', 900, 'untyped:TypeError'),
    run(9, 'hung', 30_000, 'hung'),
  ];
  const requests = [
    ...Array.from({ length: 14 }, (_, index) => request('sim-primary', index * 10, false)),
    ...Array.from({ length: 6 }, (_, index) => request('sim-primary', 200 + index, false, 'server_error')),
    request('sim-fallback', 300, false),
  ];
  const observation: ScenarioObservation = {
    scenario,
    subject: 'hand-made',
    startedAtMs: T0,
    finishedAtMs: T0 + 30_090,
    runs,
    requests,
    effects: [],
    breakerMoves: [],
    windows: [],
    requestsPerCleanRun: 2,
    schedule: { seed: 1, rates: { server_error: 0.3 } },
  };

  it('computes rates, requests per completed run, amplification, percentiles and failures by code', () => {
    const card = scorecardOf(observation);
    expect(card).toMatchObject({
      scenario: 'transient-30',
      subject: 'hand-made',
      wallMs: 30_090,
      runs: 10,
      completed: 7,
      completionRate: 0.7,
      requests: { total: 21, byModel: { 'sim-primary': 20, 'sim-fallback': 1 }, whileDown: 0 },
      requestsPerCompletedRun: 3,
      // 7 runs x 2 requests at a 30% fault rate: 14 / 0.7 = 20
      minimumRequests: 20,
      amplification: 21 / 20,
      probes: null,
      durationMs: { p50: 500, p99: 30_000, max: 30_000 },
      failuresByCode: { 'provider.server_error': 1, 'untyped:TypeError': 1, hung: 1 },
      duplicateSideEffects: 0,
      untyped: 1,
      hung: 1,
    });
  });

  it('counts the requests answered 429 under a quota, and holds them to at most 1% of the requests', () => {
    const quota = selectScenarios(['quota'])[0]!;
    const refused = (count: number) =>
      scorecardOf({
        ...observation,
        scenario: quota,
        runs: Array.from({ length: 10 }, (_, index) => run(index, 'completed', 100)),
        requests: Array.from({ length: 200 }, (_, index) =>
          request('sim-primary', index, false, index < count ? 'rate_limit' : 'none'),
        ),
      });
    const two = refused(2);
    expect(two.refusals).toEqual({ requests: 2, rate: 0.01 });
    expect(two.goals.find((goal) => goal.goal === 'refusals')).toMatchObject({
      met: true,
      actual: '1.0% (2 requests)',
    });
    expect(refused(3).goals.find((goal) => goal.goal === 'refusals')).toMatchObject({
      met: false,
      actual: '1.5% (3 requests)',
    });
    expect(rowOf(refused(3))).toMatchObject({ '429s': '1.5% (3)', wall: '30.1 s' });
    // A scenario without a quota has no refusals to count.
    expect(scorecardOf(observation).refusals).toBeNull();
  });

  it('judges the scenario goals', () => {
    const goals = Object.fromEntries(scorecardOf(observation).goals.map((goal) => [goal.goal, goal]));
    expect(Object.keys(goals)).toEqual(['completion', 'amplification', 'duplicates', 'typed']);
    expect(goals.completion).toMatchObject({
      met: false,
      actual: '70.0% complete',
      target: '>= 99.9% of runs complete (the whole answer, every tool run to its end)',
    });
    expect(goals.amplification).toMatchObject({ met: true, actual: '1.05x' });
    // No call of a tool with side effects ran: passing would say nothing.
    expect(goals.duplicates).toMatchObject({
      met: null,
      actual: 'not exercised: no call of a tool with side effects ran',
    });
    expect(goals.typed).toMatchObject({ met: false, actual: '1 untyped, 1 hung' });

    const perfect = scorecardOf({
      ...observation,
      runs: Array.from({ length: 10 }, (_, index) => run(index, 'completed', 100)),
      requests: Array.from({ length: 30 }, (_, index) => request('sim-primary', index, false)),
    });
    // 10 runs x 2 at 30%: 28.57 -> 29 requests at least; 30 is 1.03x.
    expect(perfect.minimumRequests).toBe(29);
    expect(perfect.goals.filter((goal) => goal.met !== true).map((goal) => goal.goal)).toEqual([
      'duplicates',
    ]);

    const wasteful = scorecardOf({
      ...observation,
      runs: Array.from({ length: 10 }, (_, index) => run(index, 'completed', 100)),
      requests: Array.from({ length: 33 }, (_, index) => request('sim-primary', index, false)),
    });
    expect(wasteful.goals.find((goal) => goal.goal === 'amplification')).toMatchObject({
      met: false,
      actual: '1.14x',
    });
  });

  it('has no amplification, and cannot judge it, when nothing completed', () => {
    const card = scorecardOf({ ...observation, runs: [run(0, 'failed', 10, 'provider.overloaded')] });
    expect(card.amplification).toBeNull();
    expect(card.requestsPerCompletedRun).toBeNull();
    expect(card.goals.find((goal) => goal.goal === 'amplification')?.met).toBeNull();
  });

  it('leaves the goals of a skipped scenario unjudged', () => {
    const card = scorecardOf({ ...observation, runs: [], requests: [], skipped: 'no worker' });
    expect(card).toMatchObject({
      skipped: 'no worker',
      runs: 0,
      goals: [],
      durationMs: { p50: null, p99: null },
    });
  });
});

describe('timelineOf', () => {
  it('bins requests by outcome from the scenario start, windows made relative to it', () => {
    const timeline = timelineOf({
      startedAtMs: T0,
      requests: [
        request('sim-primary', 0, false),
        request('sim-primary', 24, false, 'reset'),
        request('sim-primary', 25, true),
        request('sim-primary', 1_490, false),
        request('sim-primary', -5, false),
      ],
      windows: [{ model: 'sim-primary', startMs: T0 + 20, endMs: T0 + 1_500, fault: 'unavailable' }],
    });
    expect(timeline.binMs).toBe(25);
    expect(timeline.bins).toHaveLength(61);
    expect(timeline.bins[0]).toEqual({ startMs: 0, ok: 2, faulted: 1, down: 0 });
    expect(timeline.bins[1]).toEqual({ startMs: 25, ok: 0, faulted: 0, down: 1 });
    expect(timeline.bins[59]).toEqual({ startMs: 1_475, ok: 1, faulted: 0, down: 0 });
    expect(timeline.windows).toEqual([
      { model: 'sim-primary', startMs: 20, endMs: 1_500, fault: 'unavailable' },
    ]);
    const total = timeline.bins.reduce((sum, bin) => sum + bin.ok + bin.faulted + bin.down, 0);
    expect(total).toBe(5);
  });

  it('widens its bins to keep about 60 of them', () => {
    const timeline = timelineOf({ startedAtMs: T0, requests: [request('m', 12_000, false)], windows: [] });
    expect(timeline.binMs).toBe(200);
    expect(timeline.bins).toHaveLength(61);
  });
});

describe('how an ending counts', () => {
  const clean =
    'Here is what I found: get_weather returned "{"city":"Paris"}"; create_ticket returned "{"ticket":"T-1"}".';
  const complete = answerCheck(clean);

  it('completes only with every tool result of the fault-free answer, in any order, not cut short', () => {
    expect(complete(clean)).toBe(true);
    expect(
      complete(
        'Here is what I found: create_ticket returned "{"ticket":"T-9"}"; get_weather returned "{"city":"Paris"}". ' +
          'Some of it is missing because get_weather_v2 failed: "unknown tool".',
      ),
    ).toBe(true);
    expect(
      complete(
        'Here is what I found: get_weather returned "{"city":"Paris"}". Some of it is missing because create_ticket failed: "503".',
      ),
    ).toBe(false);
    expect(
      complete(
        'Here is what I found: get_weather returned "{"city":"Paris"}"; create_ticket returned "{"tic',
      ),
    ).toBe(false);
    expect(complete('I could not complete the request: get_weather failed: "503".')).toBe(false);
    expect(complete(undefined)).toBe(false);
    expect(answerCheck('Hello there.')('Hello there.')).toBe(true);
    expect(answerCheck('Hello there.')('Hello')).toBe(false);
  });

  it('calls a completed run without the whole answer a silent failure, and an untyped ending untyped', () => {
    const ending = (status: 'completed' | 'failed', output?: string, code?: string, typed = true) => ({
      status,
      typed,
      ...(output === undefined ? {} : { output }),
      ...(code === undefined ? {} : { code }),
    });
    expect(sampleOf('r', T0, T0 + 5, ending('completed', clean), complete)).toMatchObject({
      outcome: 'completed',
    });
    expect(sampleOf('r', T0, T0 + 5, ending('completed', 'Here is what I'), complete)).toMatchObject({
      outcome: 'failed',
      code: 'answer.incomplete',
    });
    expect(
      sampleOf('r', T0, T0 + 5, ending('failed', undefined, 'provider.max_tokens'), complete),
    ).toMatchObject({
      outcome: 'failed',
      code: 'provider.max_tokens',
    });
    expect(sampleOf('r', T0, T0 + 5, ending('failed', undefined, 'Error', false), complete)).toMatchObject({
      outcome: 'untyped',
      code: 'Error',
    });
    const done = sampleOf('r1', T0, T0 + 5, ending('completed', clean), complete);
    const effect = (tool: string, phase: 'started' | 'completed' = 'completed') => ({
      phase,
      runId: 'r1',
      tool,
      key: tool,
      idempotent: true,
      atMs: T0,
    });
    const tools = ['create_ticket', 'get_weather'];
    expect(requireTools([done], [effect('get_weather'), effect('create_ticket')], tools)).toEqual([done]);
    // The framework read a tool's error as its result: the answer quotes a call that never ran to its end.
    expect(requireTools([done], [effect('get_weather'), effect('create_ticket', 'started')], tools)).toEqual([
      { ...done, outcome: 'failed', code: 'answer.incomplete' },
    ]);
    expect(thrownSample('r', T0, T0 + 5, new TypeError('fetch failed'))).toMatchObject({
      outcome: 'untyped',
      code: 'untyped:TypeError',
    });
  });
});

describe('goals that were not exercised', () => {
  const storm = selectScenarios(['outage-fallback'])[0]!;
  const window = { model: 'sim-primary', startMs: T0 + 1_000, endMs: T0 + 2_000, fault: 'unavailable' };
  const base: ScenarioObservation = {
    scenario: storm,
    subject: 'hand-made',
    startedAtMs: T0,
    finishedAtMs: T0 + 3_000,
    runs: Array.from({ length: 4 }, (_, index) => run(index, 'completed', 100)),
    requests: [],
    effects: [],
    breakerMoves: [],
    windows: [window],
    requestsPerCleanRun: 2,
  };

  it('never passes the probe goal vacuously: no breaker opened, or it never went half-open', () => {
    const none = scorecardOf(base);
    expect(none.goals.find((goal) => goal.goal === 'probes')).toMatchObject({
      met: null,
      actual: 'not exercised: no breaker opened during the outage',
    });
    expect(goalSummary(none)).toBe('ok; not exercised: probes, duplicates');

    const opened = [{ atMs: T0 + 1_100, model: 'sim-primary', to: 'open' as const }];
    const idle = scorecardOf({ ...base, breakerMoves: opened });
    expect(idle.goals.find((goal) => goal.goal === 'probes')).toMatchObject({
      met: null,
      actual: expect.stringMatching(
        /^not exercised: the breaker did not go half-open before the outage ended; 0 requests/,
      ),
    });

    // A request reaching the dead model while the breaker was open and no probe was due is a miss, not a pass.
    const leaked = scorecardOf({
      ...base,
      breakerMoves: opened,
      requests: [request('sim-primary', 1_600, true)],
    });
    expect(leaked.goals.find((goal) => goal.goal === 'probes')?.met).toBe(false);
    expect(goalSummary(leaked)).toBe('missed: probes; not exercised: duplicates');
  });

  it('counts requests admitted before the opening by the event loop delay the scenario measured', () => {
    const opened = [{ atMs: T0 + 1_100, model: 'sim-primary', to: 'open' as const }];
    // Sent just before the breaker opened; the loop was 400 ms late, so it reached the server 450 ms after.
    const card = scorecardOf({
      ...base,
      breakerMoves: opened,
      requests: [request('sim-primary', 1_550, true)],
      eventLoopDelayMaxMs: 400,
    });
    expect(card.probes).toEqual({ afterBreakerOpened: 0, halfOpenIntervals: 0, inFlightMs: 500 });
    expect(card.goals.find((goal) => goal.goal === 'probes')?.met).toBeNull();
  });
});
