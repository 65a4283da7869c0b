import { describe, expect, it } from 'vitest';
import { KeelError } from '../errors/keel-error.js';
import { consecutive } from '../policies/breaker/consecutive.js';
import { constant } from '../policies/delays.js';
import type { ModelProvider, ModelRequest } from '../spec/model.js';
import type { RunEvent } from '../spec/run-events.js';
import { FakeClock } from '../testing/fake-clock.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { type Agent, agent } from './agent.js';
import type { AgentOptions } from './agent-options.js';
import type { RunResult } from './loop/run.js';
import { tool } from './tools/tool.js';

const serverError = () => new KeelError('provider.server_error', 'simulated 500');

/**
 * Starts `count` runs 10 ms apart (each sees the breaker as the earlier ones left it) and runs them to the end on a
 * fake clock moving 10 ms at a time, so that time passes only as far as the runs need.
 */
async function runAll(clock: FakeClock, assistant: Agent, count: number, events: RunEvent[] = []) {
  let left = count;
  const runs: Promise<RunResult>[] = [];
  for (let index = 0; index < count; index++) {
    runs.push(assistant.run('hi', { onEvent: (event) => events.push(event) }).finally(() => left--));
    await clock.advance(10);
  }
  while (left > 0) await clock.advance(10);
  return Promise.all(runs);
}

/** A model that fails with 500 while `down` says so, and answers `done` otherwise. */
function switchable(clock: FakeClock, down: (nowMs: number) => boolean) {
  const sent: number[] = [];
  const model: ModelProvider = {
    provider: 'test',
    model: 'primary',
    generate: async (_request: ModelRequest) => {
      sent.push(clock.now());
      if (down(clock.now())) throw serverError();
      return {
        content: 'done',
        toolCalls: [],
        finishReason: 'stop',
        usage: { inputTokens: 1, outputTokens: 1 },
        model: 'primary',
      };
    },
  };
  return { model, sent };
}

function build(clock: FakeClock, options: Partial<AgentOptions> & Pick<AgentOptions, 'model'>): Agent {
  return agent({ clock, retry: { delay: constant(100) }, ...options });
}

const codes = (results: readonly RunResult[]) => results.map((result) => result.error?.code ?? result.status);

describe('agent breaker defaults', () => {
  it('does not open on a flaky model: 8 failures in a row are retried through', async () => {
    const clock = new FakeClock();
    const failures = Array.from({ length: 8 }, serverError);
    const primary = scriptedModel([...failures, { content: 'one' }], { provider: 'test', model: 'primary' });
    const assistant = build(clock, { model: primary });
    // Three runs one after the other: 3 + 3 failures, then 2 failures and a success.
    const results: RunResult[] = [];
    for (let index = 0; index < 3; index++) results.push(...(await runAll(clock, assistant, 1)));

    expect(codes(results)).toEqual(['provider.server_error', 'provider.server_error', 'completed']);
    expect(primary.calls).toHaveLength(9);
    expect(assistant.breakers.get('test/primary')?.state).toBe('closed');
  });

  it('opens on a model that is down after 10 requests, and sends nothing more while open', async () => {
    const clock = new FakeClock();
    const { model, sent } = switchable(clock, () => true);
    const assistant = build(clock, { model, retry: { delay: constant(100), waitForOpenBreakerMs: 0 } });
    const results = await runAll(clock, assistant, 6);

    expect(sent).toHaveLength(10);
    expect(assistant.breakers.get('test/primary')?.state).toBe('open');
    expect(results[5]!.error?.code).toBe('policy.circuit_open');
  });
});

describe('waiting for an open breaker when no fallback is left', () => {
  it('waits for the half-open moment: one run probes, the others follow once it closes', async () => {
    const clock = new FakeClock();
    const startMs = clock.now();
    // Down for the first second: ten failures open the breaker for 5 s.
    const { model, sent } = switchable(clock, (nowMs) => nowMs - startMs < 1_000);
    const assistant = build(clock, { model, retry: { delay: constant(100), maxAttempts: 1 } });
    const events: RunEvent[] = [];
    const results = await runAll(clock, assistant, 20, events);

    expect(codes(results).filter((code) => code === 'completed')).toHaveLength(10);
    expect(codes(results).filter((code) => code === 'provider.server_error')).toHaveLength(10);
    // Ten failures open the breaker at 90 ms; one probe at the half-open moment, then the nine other waiting runs.
    const halfOpenMs = startMs + 90 + 5_000;
    expect(sent).toHaveLength(20);
    expect(sent.slice(10)).toEqual(Array.from({ length: 10 }, () => halfOpenMs));
    expect(results[10]!.report.retries.model).toBe(1);
    expect(results[10]!.report.waitingMs).toBe(4_990);
    expect(results[10]!.report.durationMs).toBe(4_990);
    const waits = events.filter((event) => event.type === 'retry-scheduled');
    expect(waits[0]).toMatchObject({ target: 'model', delayMs: 4_990, errorCode: 'policy.circuit_open' });
    expect(assistant.breakers.get('test/primary')?.state).toBe('closed');
  });

  it('lets one probe through per half-open moment; the others wait again when it fails', async () => {
    const clock = new FakeClock();
    const startMs = clock.now();
    // Down for 7 s: the probe at 5 s fails and reopens the breaker for 10 s; the probe at 15 s succeeds.
    const { model, sent } = switchable(clock, (nowMs) => nowMs - startMs < 7_000);
    const assistant = build(clock, { model, retry: { delay: constant(100), maxAttempts: 1 } });
    const results = await runAll(clock, assistant, 15);

    expect(codes(results).filter((code) => code === 'completed')).toHaveLength(4);
    expect(sent.slice(10)).toEqual([
      startMs + 90 + 5_000,
      ...Array.from({ length: 4 }, () => startMs + 90 + 5_000 + 10_000),
    ]);
    // The run whose probe failed ends with its error; the others waited for the next half-open moment.
    expect(codes(results).filter((code) => code === 'provider.server_error')).toHaveLength(11);
  });

  it('fails at once when the half-open moment lies beyond waitForOpenBreakerMs or the run deadline', async () => {
    for (const options of [
      { retry: { delay: constant(100), maxAttempts: 1, waitForOpenBreakerMs: 4_000 } },
      { retry: { delay: constant(100), maxAttempts: 1 }, limits: { timeoutMs: 3_000 } },
      { retry: { delay: constant(100), maxAttempts: 1, waitForOpenBreakerMs: 0 } },
    ]) {
      const clock = new FakeClock();
      const startMs = clock.now();
      const { model, sent } = switchable(clock, (nowMs) => nowMs - startMs < 1_000);
      const assistant = build(clock, { model, ...options });
      const results = await runAll(clock, assistant, 12);

      expect(sent).toHaveLength(10);
      expect(codes(results).slice(10)).toEqual(['policy.circuit_open', 'policy.circuit_open']);
      expect(results[11]!.report.durationMs).toBe(0);
    }
  });

  it('fails at once when the Retry-After of the rate limit that opened the breaker ends past the deadline', async () => {
    const clock = new FakeClock();
    const sent: number[] = [];
    const model: ModelProvider = {
      provider: 'test',
      model: 'primary',
      generate: async () => {
        sent.push(clock.now());
        throw new KeelError('provider.rate_limited', 'simulated 429', { retryAfterMs: 8_000, status: 429 });
      },
    };
    const assistant = build(clock, {
      model,
      breaker: { strategy: consecutive({ threshold: 2 }) },
      limits: { timeoutMs: 6_000 },
    });
    const results = await runAll(clock, assistant, 3);

    // The first two runs are refused a wait past their deadline and open the breaker; the third would reach the
    // half-open moment (5 s) within its 6 s, but a probe then cannot succeed before the 8 s Retry-After ends.
    expect(codes(results)).toEqual(['provider.rate_limited', 'provider.rate_limited', 'policy.circuit_open']);
    expect(sent).toHaveLength(2);
    expect(results[2]!.report.durationMs).toBe(0);
    expect(results[2]!.report.waitingMs).toBe(0);
  });

  it('rejects a negative waitForOpenBreakerMs with config.invalid', () => {
    const model = scriptedModel([]);
    expect(() => agent({ model, retry: { waitForOpenBreakerMs: -1 } })).toThrow(/retry.waitForOpenBreakerMs/);
  });
});

/** A seeded generator (mulberry32), so that "half the calls fail" is the same half on every run of the test. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A model that calls get_weather until a call succeeds, then answers `done`. */
function weatherSeeker(): ModelProvider {
  let calls = 0;
  return {
    provider: 'test',
    model: 'seeker',
    generate: async (request: ModelRequest) => {
      const last = request.messages.at(-1);
      const succeeded =
        last?.role === 'tool' && (JSON.parse(last.content) as { status: string }).status === 'success';
      calls++;
      return {
        content: succeeded ? 'done' : '',
        toolCalls: succeeded
          ? []
          : [{ id: `call-${calls}`, name: 'get_weather', arguments: '{"city":"Paris"}' }],
        finishReason: succeeded ? 'stop' : 'tool_calls',
        usage: { inputTokens: 1, outputTokens: 1 },
        model: 'seeker',
      };
    },
  };
}

/** A tool whose calls fail `failRate` of the time by hanging until their 3 s timeout; the others answer at once. */
function slowFlakyTool(random: () => number, failRate: number, outcomes: string[]) {
  return tool({
    name: 'get_weather',
    description: 'Current weather for a city',
    input: {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    },
    idempotent: true,
    timeoutMs: 3_000,
    execute: (_input, { signal }) => {
      if (random() >= failRate) {
        outcomes.push('success');
        return { temperatureC: 18 };
      }
      outcomes.push('timeout');
      return new Promise((_resolve, reject) => {
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    },
  });
}

describe('agent tool breaker defaults', () => {
  it('does not open on a slow, flaky tool: half its calls time out after 3 s, 50 runs at once all complete', async () => {
    const clock = new FakeClock();
    const outcomes: string[] = [];
    const weather = slowFlakyTool(seeded(7), 0.5, outcomes);
    const assistant = agent({
      clock,
      model: weatherSeeker(),
      tools: [weather],
      retry: { delay: constant(100) },
      limits: { maxTurns: 8, timeoutMs: 20_000 },
    });
    const events: RunEvent[] = [];
    const runs = Array.from({ length: 50 }, () =>
      assistant.run('Weather in Paris?', { onEvent: (event) => events.push(event) }),
    );
    let settled = 0;
    for (const run of runs) void run.finally(() => settled++);
    while (settled < runs.length) await clock.advance(10);
    const results = await Promise.all(runs);

    // Ten timeouts in a row happen here (the first attempts' failures all end 3 s after they started), which opened
    // the consecutive breaker; a failure rate of 90% over 20 calls does not.
    expect(outcomes.filter((outcome) => outcome === 'timeout').length).toBeGreaterThan(20);
    const opened = events.filter((event) => event.type === 'breaker-opened' && event.target === 'tool');
    expect(opened).toEqual([]);
    expect(codes(results).filter((code) => code === 'completed')).toHaveLength(50);
    expect(assistant.breakers.get('tool:get_weather')?.state).toBe('closed');
  });

  it('opens on a tool that is down, after 20 failed calls, and calls it no more while open', async () => {
    const clock = new FakeClock();
    const outcomes: string[] = [];
    const weather = slowFlakyTool(() => 0, 1, outcomes);
    const assistant = agent({
      clock,
      model: weatherSeeker(),
      tools: [weather],
      retry: { delay: constant(100) },
      limits: { maxTurns: 8, timeoutMs: 20_000 },
    });
    const runs = Array.from({ length: 10 }, () => assistant.run('Weather in Paris?'));
    let settled = 0;
    for (const run of runs) void run.finally(() => settled++);
    while (settled < runs.length) await clock.advance(10);
    await Promise.all(runs);

    expect(assistant.breakers.get('tool:get_weather')?.state).toBe('open');
    // Ten runs' first attempts and their first retries: the 20th failure opens it; no call is sent after that.
    expect(outcomes).toHaveLength(20);
  });
});
