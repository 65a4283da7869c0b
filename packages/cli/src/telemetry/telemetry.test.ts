// `keel run --otlp --metrics-port --log json` in this process, against real servers on 127.0.0.1: an OpenAI-wire
// model server that echoes the API key in its error bodies (as real providers do), and an OTLP/HTTP receiver.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agent, tool } from '@keel/core';
import { type HttpTestServer, scriptedModel, sendJson, startHttpTestServer } from '@keel/core/testing';
import { trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { freeLoopbackPort } from '../../../../scripts/test-services.js';
import { main } from '../main.js';
import type { Output } from '../output/output.js';
import { attributesOf, metricNamesOf, spansOf } from '../test-support/otlp-receiver.js';
import { startTelemetry } from './telemetry.js';

const SECRET = 'sk-proj-Zq7rT3xN9vK2mW8pL4sJ6hF1dG5bC0aE';

/** An OpenAI chat completion answer. */
function completion(model: string, message: Record<string, unknown>, finishReason: string) {
  return {
    id: `chatcmpl-${model}`,
    object: 'chat.completion',
    model: `${model}-2025`,
    choices: [
      { index: 0, message: { role: 'assistant', content: null, ...message }, finish_reason: finishReason },
    ],
    usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 },
  };
}

/**
 * The primary model is rate limited, then fails with a 500 (both bodies quote the key it was sent); the backup asks
 * for get_weather with a wrong argument (a correction), then correctly, then answers. While the backup answers its
 * first request, the server scrapes keel's /metrics.
 */
function modelServer(metricsUrl: () => string, scraped: string[]) {
  let backupCalls = 0;
  return startHttpTestServer(async (request, response) => {
    const body = request.json() as { model: string };
    const key = String(request.headers.authorization);
    if (body.model === 'gpt-primary') {
      const status = request.index === 1 ? 429 : 500;
      response.writeHead(status, { 'content-type': 'application/json', 'retry-after-ms': '5' });
      response.end(
        JSON.stringify({
          error: { message: `Upstream failed for Authorization: ${key}`, type: 'server_error' },
        }),
      );
      return;
    }
    backupCalls++;
    if (backupCalls === 1) {
      scraped.push(await (await fetch(metricsUrl())).text());
      const call = {
        id: 'call_1',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"town":"Paris"}' },
      };
      response.setHeader('x-request-id', 'req_backup_1');
      sendJson(response, 200, completion('gpt-backup', { tool_calls: [call] }, 'tool_calls'));
    } else if (backupCalls === 2) {
      const call = {
        id: 'call_2',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
      };
      sendJson(response, 200, completion('gpt-backup', { tool_calls: [call] }, 'tool_calls'));
    } else {
      sendJson(response, 200, completion('gpt-backup', { content: 'Sunny in Paris.' }, 'stop'));
    }
  });
}

/** Collects what a command prints. */
function capture() {
  const lines: string[] = [];
  const errors: string[] = [];
  const output: Output = {
    out: (line) => lines.push(line),
    error: (line) => errors.push(line),
    colour: false,
  };
  return { lines, errors, output };
}

describe('keel run with telemetry flags', () => {
  const servers: HttpTestServer[] = [];
  const directories: string[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
    for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
  });

  it('exports over OTLP/HTTP, serves /metrics during the run, logs JSON lines, and leaks no provider secret', async () => {
    const receiver = await startHttpTestServer((_request, response) => sendJson(response, 200, {}));
    servers.push(receiver);
    const metricsPort = await freeLoopbackPort();
    const scraped: string[] = [];
    const model = await modelServer(() => `http://127.0.0.1:${metricsPort}/metrics`, scraped);
    servers.push(model);
    const directory = mkdtempSync(join(tmpdir(), 'keel-cli-telemetry-'));
    directories.push(directory);
    writeFileSync(
      join(directory, 'agent.yaml'),
      [
        'name: forecaster',
        `model: { provider: openai, name: gpt-primary, baseUrl: "${model.url}/v1", apiKeyEnv: OPENAI_API_KEY }`,
        `fallbacks: [{ provider: openai, name: gpt-backup, baseUrl: "${model.url}/v1", apiKeyEnv: OPENAI_API_KEY }]`,
        'tools: [get_weather]',
        'retry: { maxAttempts: 2 }',
      ].join('\n'),
    );
    const lines: string[] = [];
    const errors: string[] = [];
    const output: Output = {
      out: (line) => lines.push(line),
      error: (line) => errors.push(line),
      colour: false,
    };

    const code = await main(
      [
        'run',
        'agent.yaml',
        'Weather in Paris?',
        '--otlp',
        receiver.url,
        '--metrics-port',
        String(metricsPort),
        '--log',
        'json',
        '--allow-key-host',
        '127.0.0.1',
      ],
      { OPENAI_API_KEY: SECRET },
      output,
      directory,
    );
    expect({ code, errors }).toEqual({ code: 0, errors: [] });
    // The provider did receive the key: what follows would prove nothing otherwise.
    expect(model.requests[0]!.headers.authorization).toBe(`Bearer ${SECRET}`);

    // --log json: every line is JSON, with the run id; the last one is the result.
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const runId = logged.at(-1)!.runId;
    expect(logged.at(-1)).toMatchObject({
      event: 'run-result',
      status: 'completed',
      stopReason: 'final_answer',
    });
    expect(logged.every((line) => line.runId === runId && line.component === 'keel')).toBe(true);
    expect(
      logged
        .filter((line) => line.event !== 'run-result')
        .every((line) => /^[0-9a-f]{32}$/.test(String(line.trace_id))),
    ).toBe(true);
    expect(logged.map((line) => line.event)).toEqual(
      expect.arrayContaining([
        'run-start',
        'retry-scheduled',
        'fallback-used',
        'correction',
        'tool-call-end',
        'run-end',
      ]),
    );

    // /metrics was scraped while the run went on.
    expect(scraped).toHaveLength(1);
    expect(scraped[0]).toContain('keel_runs_active{agent_name="forecaster"} 1');
    expect(scraped[0]).toMatch(
      /keel_fallbacks_total\{fallback_from="openai-compatible\/gpt-primary",fallback_to="openai-compatible\/gpt-backup",error_type="provider.server_error"\} 1/,
    );

    // OTLP/HTTP: decode what arrived (JSON).
    const traces = receiver.requests.filter((request) => request.url === '/v1/traces');
    const metrics = receiver.requests.filter((request) => request.url === '/v1/metrics');
    expect(traces.length).toBeGreaterThan(0);
    expect(metrics.length).toBeGreaterThan(0);
    expect(traces[0]!.headers['content-type']).toBe('application/json');
    const spans = spansOf(receiver);
    const root = spans.find((span) => span.name === 'invoke_agent forecaster')!;
    expect(attributesOf(root.attributes)).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'keel.run.id': runId,
      'keel.run.status': 'completed',
    });
    const children = spans.filter((span) => span.parentSpanId === root.spanId).map((span) => span.name);
    expect(children).toEqual(
      expect.arrayContaining(['chat gpt-primary', 'chat gpt-backup', 'execute_tool get_weather']),
    );
    expect(children.filter((name) => name === 'chat gpt-primary')).toHaveLength(2);
    const failedChat = spans.find((span) => span.name === 'chat gpt-primary')!;
    expect(attributesOf(failedChat.attributes)).toMatchObject({
      'gen_ai.provider.name': 'openai-compatible',
      'gen_ai.request.model': 'gpt-primary',
    });
    const answered = spans
      .filter((span) => span.name === 'chat gpt-backup')
      .map((span) => attributesOf(span.attributes));
    expect(answered[0]).toMatchObject({
      'gen_ai.response.model': 'gpt-backup-2025',
      'keel.request.id': 'req_backup_1',
    });
    expect(root.events?.map((event) => event.name)).toEqual(
      expect.arrayContaining(['keel.retry', 'keel.fallback', 'keel.correction']),
    );
    const metricNames = metricNamesOf(receiver);
    expect(metricNames).toEqual(
      expect.arrayContaining([
        'gen_ai.client.operation.duration',
        'gen_ai.client.token.usage',
        'keel.runs',
        'keel.retries',
      ]),
    );

    // No secret anywhere: spans, metrics (OTLP and Prometheus), log lines.
    const everything = [...receiver.requests.map((request) => request.body), ...scraped, ...lines, ...errors];
    for (const text of everything) expect(text).not.toContain(SECRET);
    expect(everything.join('\n')).not.toContain(SECRET.slice(8));
  });

  it('refuses bad telemetry flags before running anything', async () => {
    const errors: string[] = [];
    const output: Output = { out: () => undefined, error: (line) => errors.push(line), colour: false };
    expect(await main(['run', 'agent.yaml', 'x', '--log', 'xml'], {}, output, tmpdir())).toBe(2);
    expect(await main(['run', 'agent.yaml', 'x', '--metrics-port', '70000'], {}, output, tmpdir())).toBe(2);
    expect(await main(['run', 'agent.yaml', 'x', '--otlp', 'ftp://collector'], {}, output, tmpdir())).toBe(2);
    expect(await main(['resume', 'run-1', '--log', 'xml'], {}, output, tmpdir())).toBe(2);
    expect(await main(['resume', 'run-1', '--otlp', 'ftp://collector'], {}, output, tmpdir())).toBe(2);
    expect(errors).toEqual([
      'config.invalid: --log must be json or text, not "xml"',
      'config.invalid: --metrics-port must be at most 65535',
      'config.invalid: --otlp must be an http(s) URL such as http://127.0.0.1:4318, not "ftp://collector"',
      'config.invalid: --log must be json or text, not "xml"',
      'config.invalid: --otlp must be an http(s) URL such as http://127.0.0.1:4318, not "ftp://collector"',
    ]);
  });

  it('gives keel resume the same flags: OTLP export linked to the first attempt, /metrics, JSON lines', async () => {
    const receiver = await startHttpTestServer((_request, response) => sendJson(response, 200, {}));
    servers.push(receiver);
    const metricsPort = await freeLoopbackPort();
    const scraped: string[] = [];
    // Asks for an urgent ticket (the run waits for approval), then, once resumed and the ticket opened, scrapes
    // keel's /metrics and answers.
    const model = await startHttpTestServer(async (request, response) => {
      if (request.index === 1) {
        const call = {
          id: 'call_1',
          type: 'function',
          function: { name: 'create_ticket', arguments: '{"title":"Printer on fire","priority":"urgent"}' },
        };
        sendJson(response, 200, completion('gpt-desk', { tool_calls: [call] }, 'tool_calls'));
        return;
      }
      scraped.push(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text());
      sendJson(response, 200, completion('gpt-desk', { content: 'Ticket opened.' }, 'stop'));
    });
    servers.push(model);
    const directory = mkdtempSync(join(tmpdir(), 'keel-cli-telemetry-'));
    directories.push(directory);
    writeFileSync(
      join(directory, 'support.yaml'),
      [
        'name: support',
        `model: { provider: openai, name: gpt-desk, baseUrl: "${model.url}/v1", apiKeyEnv: OPENAI_API_KEY }`,
        'tools: [create_ticket]',
      ].join('\n'),
    );
    const environment = { OPENAI_API_KEY: SECRET };
    const hosts = ['--allow-key-host', '127.0.0.1'];
    const first = capture();
    const started = [
      'run',
      'support.yaml',
      'Open an urgent ticket',
      '--json',
      '--otlp',
      receiver.url,
      ...hosts,
    ];
    expect(await main(started, environment, first.output, directory)).toBe(3);
    const interrupted = JSON.parse(first.lines.join('\n')) as {
      runId: string;
      pending: { idempotencyKey: string }[];
    };
    const firstRoot = spansOf(receiver).find((span) => span.name === 'invoke_agent support')!;
    expect(firstRoot).toBeDefined();

    const resumed = capture();
    const code = await main(
      [
        'resume',
        interrupted.runId,
        '--approve',
        interrupted.pending[0]!.idempotencyKey,
        '--otlp',
        receiver.url,
        '--metrics-port',
        String(metricsPort),
        '--log',
        'json',
        ...hosts,
      ],
      environment,
      resumed.output,
      directory,
    );
    expect({ code, errors: resumed.errors }).toEqual({ code: 0, errors: [] });

    // --log json: every line is JSON, the first says the run resumed, the last is the result.
    const logged = resumed.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged[0]).toMatchObject({ event: 'run-resumed', runId: interrupted.runId });
    expect(logged.at(-1)).toMatchObject({
      event: 'run-result',
      runId: interrupted.runId,
      status: 'completed',
    });
    const toolLine = logged.find((line) => line.event === 'tool-call-end');
    expect(String(toolLine?.trace_id)).toMatch(/^[0-9a-f]{32}$/);

    // --metrics-port: served while the resumed run went on.
    expect(scraped).toHaveLength(1);
    expect(scraped[0]).toContain('keel_runs_active{agent_name="support"} 1');

    // --otlp: the resumed run's span links to the first attempt's, and the ticket's call is its child.
    const roots = spansOf(receiver).filter((span) => span.name === 'invoke_agent support');
    expect(roots).toHaveLength(2);
    const second = roots.find((span) => span.spanId !== firstRoot.spanId)!;
    expect(attributesOf(second.attributes)).toMatchObject({
      'keel.run.id': interrupted.runId,
      'keel.run.resumed': true,
      'keel.run.status': 'completed',
    });
    expect(second.links?.map((link) => link.spanId)).toEqual([firstRoot.spanId]);
    const ticket = spansOf(receiver).find((span) => span.name === 'execute_tool create_ticket')!;
    expect(ticket.parentSpanId).toBe(second.spanId);

    const everything = [...receiver.requests.map((request) => request.body), ...scraped, ...resumed.lines];
    for (const text of everything) expect(text).not.toContain(SECRET);
  });

  it('runs each tool inside its execute_tool span when tracing is on', async () => {
    const receiver = await startHttpTestServer((_request, response) => sendJson(response, 200, {}));
    servers.push(receiver);
    const { output, errors } = capture();
    const activeSpanIds: (string | undefined)[] = [];
    const probe = tool({
      name: 'probe',
      description: 'Notes the span active while it runs',
      input: { type: 'object' },
      execute: async () => {
        await Promise.resolve();
        activeSpanIds.push(trace.getActiveSpan()?.spanContext().spanId);
        return 'noted';
      },
    });
    const untraced = await startTelemetry({ logJson: false }, output);
    expect(untraced.wrapTools([probe])).toEqual([probe]);
    await untraced.close();

    const telemetry = await startTelemetry({ otlp: receiver.url, logJson: false }, output);
    try {
      const assistant = agent({
        model: scriptedModel([{ toolCalls: [{ name: 'probe', arguments: {} }] }, { content: 'done' }]),
        tools: telemetry.wrapTools([probe]),
      });
      telemetry.observe(assistant);
      expect((await assistant.run('probe')).status).toBe('completed');
    } finally {
      await telemetry.close();
    }
    expect(errors).toEqual([]);
    const span = spansOf(receiver).find((entry) => entry.name === 'execute_tool probe')!;
    expect(activeSpanIds).toEqual([span.spanId]);
  });
});
