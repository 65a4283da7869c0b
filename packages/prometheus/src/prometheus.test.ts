import { spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { KeelError, MemoryRunStore, retryBudget } from '@keel/core';
import { FakeClock, FaultyRunStore } from '@keel/core/testing';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { faultyAgent } from '../../telemetry/src/test-faulty-agent.js';
import type { MetricsServer } from './metrics-server.js';
import { keelPrometheus } from './prometheus.js';
import { PROMTOOL_BINARY, type PrometheusServer, startPrometheus } from './test-prometheus-server.js';

/** The value of the exposition's line for `series` (name and labels exactly as printed), or undefined. */
function sample(exposition: string, series: string): number | undefined {
  const line = exposition.split('\n').find((entry) => entry.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** A durable faulty run whose store fails one write (retried) while the card tool runs. */
async function faultyRunExposition() {
  const clock = new FakeClock();
  const store = new FaultyRunStore(new MemoryRunStore());
  const assistant = faultyAgent({
    clock,
    store,
    onCharge: () => {
      store.down = true;
      clock.setTimeout(() => {
        store.down = false;
      }, 50);
    },
  });
  const prometheus = keelPrometheus();
  prometheus.observe(assistant);
  const budget = retryBudget({ maxRetries: 50, ratio: false });
  prometheus.observeRetryBudget('process', budget);
  budget.tryAcquireRetry();
  const pending = assistant.run('Weather in Paris, and charge the booking', { runId: 'run-secret-id-1' });
  await clock.advance(1_000);
  expect((await pending).status).toBe('completed');
  return { exposition: await prometheus.metrics(), prometheus };
}

describe('keelPrometheus exposition', () => {
  it('counts a faulty run in keel and GenAI series, with no run id among the labels', async () => {
    const { exposition } = await faultyRunExposition();
    expect(
      sample(
        exposition,
        'keel_runs_total{agent_name="travel",run_status="completed",run_stop_reason="final_answer"}',
      ),
    ).toBe(1);
    expect(sample(exposition, 'keel_runs_active{agent_name="travel"}')).toBe(0);
    expect(
      sample(
        exposition,
        'keel_model_requests_total{model="openai/gpt-primary",outcome="error",error_type="provider.server_error"}',
      ),
    ).toBe(2);
    expect(
      sample(exposition, 'keel_model_requests_total{model="anthropic/claude-backup",outcome="success"}'),
    ).toBe(2);
    expect(
      sample(
        exposition,
        'keel_retries_total{dependency_kind="model",dependency_name="openai/gpt-primary",error_type="provider.server_error"}',
      ),
    ).toBe(1);
    expect(
      sample(
        exposition,
        'keel_retries_total{dependency_kind="tool",dependency_name="get_weather",error_type="tool.unavailable"}',
      ),
    ).toBe(1);
    expect(
      sample(
        exposition,
        'keel_fallbacks_total{fallback_from="openai/gpt-primary",fallback_to="anthropic/claude-backup",error_type="provider.server_error"}',
      ),
    ).toBe(1);
    expect(sample(exposition, 'keel_corrections_total{correction_kind="unknown_tool"}')).toBe(1);
    expect(
      sample(
        exposition,
        'keel_tool_calls_total{gen_ai_tool_name="charge_card",outcome="error",error_type="tool.failed"}',
      ),
    ).toBe(1);
    const breaker = 'agent_name="travel",breaker_name="openai/gpt-primary",dependency_kind="model"';
    expect(sample(exposition, `keel_breaker_state{${breaker},breaker_state="open"}`)).toBe(1);
    expect(sample(exposition, `keel_breaker_state{${breaker},breaker_state="closed"}`)).toBe(0);
    expect(sample(exposition, `keel_breaker_transitions_total{${breaker},breaker_state="open"}`)).toBe(1);
    expect(sample(exposition, 'keel_retry_budget_remaining{retry_budget_name="process"}')).toBe(49);
    const chat =
      'gen_ai_operation_name="chat",gen_ai_provider_name="anthropic",gen_ai_request_model="claude-backup",gen_ai_response_model="claude-backup"';
    expect(sample(exposition, `gen_ai_client_operation_duration_seconds_count{${chat}}`)).toBe(2);
    expect(sample(exposition, `gen_ai_client_operation_duration_seconds_bucket{le="81.92",${chat}}`)).toBe(2);
    expect(sample(exposition, `gen_ai_client_token_usage_sum{${chat},gen_ai_token_type="input"}`)).toBe(420);
    expect(
      sample(
        exposition,
        `gen_ai_client_token_usage_bucket{le="67108864",${chat},gen_ai_token_type="output"}`,
      ),
    ).toBe(2);
    expect(
      sample(
        exposition,
        'keel_checkpoints_total{checkpoint_transition="model-response-received",outcome="success"}',
      ),
    ).toBe(2);
    expect(
      sample(exposition, 'keel_checkpoints_total{checkpoint_transition="run-ended",outcome="success"}'),
    ).toBe(1);
    expect(
      sample(
        exposition,
        'keel_checkpoint_duration_seconds_count{checkpoint_transition="tool-call-completed",outcome="success"}',
      ),
    ).toBe(3);
    // The write the store refused once was retried after 100 ms, and its checkpoint took that long.
    expect(
      sample(
        exposition,
        'keel_checkpoint_duration_seconds_bucket{le="0.1",checkpoint_transition="tool-call-completed",outcome="success"}',
      ),
    ).toBe(3);
    expect(
      sample(
        exposition,
        'keel_checkpoint_duration_seconds_bucket{le="0.05",checkpoint_transition="tool-call-completed",outcome="success"}',
      ),
    ).toBe(2);
    expect(sample(exposition, 'keel_store_errors_total{error_type="store.unavailable"}')).toBe(1);
    expect(
      sample(
        exposition,
        'keel_retries_total{dependency_kind="store",dependency_name="run store",error_type="store.unavailable"}',
      ),
    ).toBe(1);
    expect(exposition).not.toContain('run-secret-id-1');
    expect(exposition).not.toContain('idempotency');
  });

  it('passes promtool check metrics', async () => {
    const { exposition } = await faultyRunExposition();
    const checked = spawnSync(PROMTOOL_BINARY, ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
    expect(checked.error).toBeUndefined();
    expect({ status: checked.status, output: `${checked.stdout}${checked.stderr}` }).toEqual({
      status: 0,
      output: '',
    });
  });

  it('serves /metrics, and answers 404 elsewhere and 405 to other methods', async () => {
    const { prometheus } = await faultyRunExposition();
    const server = await prometheus.serve({ port: 0 });
    try {
      const response = await fetch(server.url);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/plain; version=0.0.4');
      expect(await response.text()).toContain('keel_runs_total{');
      expect((await fetch(server.url.replace('/metrics', '/other'))).status).toBe(404);
      expect((await fetch(server.url, { method: 'POST' })).status).toBe(405);
      const head = await new Promise<number | undefined>((resolve, reject) => {
        request(server.url, { method: 'HEAD' }, (answer) => resolve(answer.statusCode))
          .on('error', reject)
          .end();
      });
      expect(head).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('refuses bad options and a taken port with a KeelError that says what to fix', async () => {
    expect(() => keelPrometheus({ registery: new Registry() } as never)).toThrow(/did you mean registry/);
    expect(() => keelPrometheus({ registry: {} as never })).toThrow(
      /registry must be a prom-client Registry/,
    );
    const prometheus = keelPrometheus();
    await expect(prometheus.serve({ port: 70_000 })).rejects.toThrow(/integer from 0 to 65535/);
    const first = await prometheus.serve({ port: 0 });
    try {
      const taken = await prometheus.serve({ port: first.port }).catch((error: unknown) => error);
      expect(KeelError.isInstance(taken) && taken.code).toBe('network.connection');
    } finally {
      await first.close();
    }
  });
});

describe('a real Prometheus scraping keel', () => {
  let prometheusServer: PrometheusServer | undefined;
  let metricsServer: MetricsServer | undefined;
  afterEach(async () => {
    await prometheusServer?.stop();
    await metricsServer?.close();
  });

  it('finds the series of a run it scraped while the run went on, through its HTTP API', async () => {
    const prometheus = keelPrometheus();
    metricsServer = await prometheus.serve({ port: 0 });
    prometheusServer = await startPrometheus([`127.0.0.1:${metricsServer.port}`]);
    const server = prometheusServer;
    const assistant = faultyAgent({
      name: 'scraped',
      retryDelayMs: 5,
      // The run waits until Prometheus has scraped it in flight.
      duringRun: async () => {
        await server.waitFor('keel_runs_active{agent_name="scraped"}', (samples) => samples[0]?.value === 1);
      },
    });
    prometheus.observe(assistant);
    const result = await assistant.run('Weather in Paris, and charge the booking');
    expect(result.status).toBe('completed');

    await server.waitFor('keel_runs_total{agent_name="scraped"}', (samples) => samples.length === 1);
    const runs = await server.query('keel_runs_total{agent_name="scraped"}');
    expect(runs.map((entry) => [entry.metric.run_status, entry.metric.run_stop_reason, entry.value])).toEqual(
      [['completed', 'final_answer', 1]],
    );
    expect(runs[0]!.metric).toMatchObject({ job: 'keel', instance: `127.0.0.1:${metricsServer.port}` });
    const requests = await server.query('sum by (model, outcome) (keel_model_requests_total)');
    expect(requests.map((entry) => [entry.metric.model, entry.metric.outcome, entry.value]).sort()).toEqual([
      ['anthropic/claude-backup', 'success', 2],
      ['openai/gpt-primary', 'error', 2],
    ]);
    expect((await server.query('sum(keel_retries_total)'))[0]?.value).toBe(2);
    expect((await server.query('keel_fallbacks_total'))[0]?.metric).toMatchObject({
      fallback_from: 'openai/gpt-primary',
      fallback_to: 'anthropic/claude-backup',
      error_type: 'provider.server_error',
    });
    expect(
      (await server.query('keel_breaker_state{breaker_name="openai/gpt-primary",breaker_state="open"}'))[0]
        ?.value,
    ).toBe(1);
    expect((await server.query('keel_tool_calls_total{outcome="error"}'))[0]?.metric.error_type).toBe(
      'tool.failed',
    );
    expect(
      (
        await server.query(
          'sum(gen_ai_client_operation_duration_seconds_count{gen_ai_operation_name="chat"})',
        )
      )[0]?.value,
    ).toBe(4);
    expect(
      (await server.query('sum(gen_ai_client_token_usage_sum{gen_ai_token_type="output"})'))[0]?.value,
    ).toBe(42);
    expect((await server.query('keel_runs_active{agent_name="scraped"}'))[0]?.value).toBe(0);
  });
});
