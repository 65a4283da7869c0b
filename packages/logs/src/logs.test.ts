import { FakeClock } from '@keel/core/testing';
import { keelTracing } from '@keel/otel';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { faultyAgent } from '../../telemetry/src/test-faulty-agent.js';
import { keelLogs } from './logs.js';

/** A pino logger at `level` whose lines are kept, parsed. */
function capturedLogger(level = 'debug') {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level }, { write: (text: string) => lines.push(JSON.parse(text)) });
  return { logger, lines };
}

describe('keelLogs', () => {
  it('writes one JSON line per event with run id, step and the ids of its span', async () => {
    const spans = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
    const clock = new FakeClock();
    const assistant = faultyAgent({ clock });
    const tracing = keelTracing({ tracer: provider.getTracer('test') });
    tracing.observe(assistant);
    const { logger, lines } = capturedLogger();
    keelLogs({ logger, traceIdsOf: tracing.traceIdsOf }).observe(assistant);

    const pending = assistant.run('Weather in Paris, and charge the booking', { runId: 'run-logged' });
    await clock.advance(1_000);
    expect((await pending).status).toBe('completed');

    expect(lines.length).toBeGreaterThan(10);
    for (const line of lines) {
      expect(line).toMatchObject({ component: 'keel', runId: 'run-logged' });
      expect(line.trace_id).toMatch(/^[0-9a-f]{32}$/);
      expect(line.span_id).toMatch(/^[0-9a-f]{16}$/);
      expect(line.trace_flags).toBe('01');
      const stepless = ['run-start', 'run-end', 'breaker-opened'].includes(String(line.event));
      if (!stepless) expect([1, 2]).toContain(line.step);
    }
    expect(lines.filter((line) => line.event === 'step-end').map((line) => line.step)).toEqual([1]);
    const finished = spans.getFinishedSpans();
    const spanIdOf = (name: string, index = 0) =>
      finished.filter((span) => span.name === name)[index]!.spanContext().spanId;
    const byEvent = (event: string) => lines.filter((line) => line.event === event);
    expect(byEvent('run-start')[0]!.span_id).toBe(spanIdOf('invoke_agent travel'));
    expect(byEvent('model-call-end').map((line) => [line.level, line.outcome, line.span_id])).toEqual([
      [40, 'error', spanIdOf('chat gpt-primary', 0)],
      [40, 'error', spanIdOf('chat gpt-primary', 1)],
      [30, 'success', spanIdOf('chat claude-backup', 0)],
      [30, 'success', spanIdOf('chat claude-backup', 1)],
    ]);
    expect(byEvent('model-call-start')[0]!.span_id).toBe(spanIdOf('chat gpt-primary', 0));
    expect(byEvent('tool-call-end').find((line) => line.toolName === 'charge_card')).toMatchObject({
      level: 40,
      status: 'error',
      errorCode: 'tool.failed',
      span_id: spanIdOf('execute_tool charge_card'),
      msg: 'tool charge_card failed: tool.failed (sent to the model as data)',
    });
    expect(
      byEvent('retry-scheduled').map((line) => [line.target, line.name, line.errorCode, line.delayMs]),
    ).toEqual([
      ['model', 'openai/gpt-primary', 'provider.server_error', 250],
      ['tool', 'get_weather', 'tool.unavailable', 250],
    ]);
    expect(byEvent('fallback-used')[0]).toMatchObject({ level: 40, from: 'openai/gpt-primary' });
    expect(byEvent('breaker-opened')[0]).toMatchObject({
      level: 40,
      name: 'openai/gpt-primary',
      target: 'model',
    });
    expect(byEvent('correction')[0]).toMatchObject({ kind: 'unknown_tool', toolName: 'get_wether' });
    expect(byEvent('correction')[0]!.correction).toBeUndefined();
    expect(byEvent('run-end')[0]).toMatchObject({
      level: 30,
      status: 'completed',
      stopReason: 'final_answer',
    });
  });

  it('redacts secrets in what it logs, and adds correction messages only when asked', async () => {
    const clock = new FakeClock();
    const secret = 'sk-proj-Zq7rT3xN9vK2mW8pL4sJ6hF1dG5bC0aE';
    const { logger, lines } = capturedLogger();
    const logs = keelLogs({ logger, recordContent: true });
    logs.onEvent({
      type: 'run-end',
      runId: 'run-1',
      atMs: clock.now(),
      status: 'failed',
      stopReason: 'model_error',
      durationMs: 12,
      error: { name: 'KeelError', code: 'provider.auth', message: `Incorrect API key provided: ${secret}` },
    });
    logs.onEvent({
      type: 'correction',
      runId: 'run-1',
      atMs: clock.now(),
      step: 2,
      kind: 'invalid_arguments',
      toolName: 'login',
      message: `Invalid arguments for login: password=${secret}`,
    });
    expect(JSON.stringify(lines)).not.toContain(secret);
    expect(lines[0]).toMatchObject({ level: 50, error: { code: 'provider.auth' } });
    expect(lines[1]!.correction).toMatch(/^Invalid arguments for login: password=\[redacted\]/);
  });

  it('honours the logger level and refuses bad options', () => {
    const { logger, lines } = capturedLogger('warn');
    keelLogs({ logger }).onEvent({
      type: 'run-start',
      runId: 'r',
      atMs: 0,
      agentName: 'quiet',
      annotations: {},
    });
    expect(lines).toEqual([]);
    expect(() => keelLogs({ loger: logger } as never)).toThrow(/did you mean logger/);
    expect(() => keelLogs({ traceIdsOf: 'yes' } as never)).toThrow(/traceIdsOf must be a function/);
    expect(() => keelLogs({ logger: {} as never })).toThrow(/logger must be a pino logger/);
  });

  it('removes the secrets it is given from every line, whatever their shape', () => {
    const key = '9f86d081884c7d659a2feaa0c55ad015';
    const { logger, lines } = capturedLogger();
    keelLogs({ logger, secrets: [key, undefined] }).write(
      'info',
      { responseModel: key, nested: { echo: `got ${key}` } },
      `model ${key} answered`,
    );
    expect(JSON.stringify(lines)).not.toContain(key);
    expect(lines[0]).toMatchObject({
      responseModel: '[redacted]',
      nested: { echo: 'got [redacted]' },
      msg: 'model [redacted] answered',
    });
    expect(() => keelLogs({ logger, secrets: 'x' as never })).toThrow(/secrets must be an array/);
  });
});
