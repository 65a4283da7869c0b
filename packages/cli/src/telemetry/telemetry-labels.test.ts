// What the command line's telemetry (startTelemetry: OTLP/HTTP, Prometheus /metrics) makes of a provider that names a
// different model in every response, once the API key itself: against real servers on 127.0.0.1, an OpenAI-wire model
// server and an OTLP/HTTP receiver.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agent } from '@keel/core';
import { type HttpTestServer, sendJson, startHttpTestServer } from '@keel/core/testing';
import { openaiCompatible } from '@keel/openai';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../main.js';
import type { Output } from '../output/output.js';
import { attributesOf, spansOf } from '../test-support/otlp-receiver.js';
import { startTelemetry } from './telemetry.js';

// A Groq key: no credential pattern knows its shape, only its value (from the environment) finds it.
const KEY = 'gsk_8fQzK2mXw9LpR4vT7yN1bC6dH3jE5aS0uI8oP2qW4eR6tY9uXz';
const RESPONSES = 300;

function capture() {
  const errors: string[] = [];
  const output: Output = { out: () => undefined, error: (line) => errors.push(line), colour: false };
  return { errors, output };
}

/** Answers each chat completion naming a new model; the third names the key it was sent. */
function modelServer() {
  return startHttpTestServer((request, response) => {
    const model =
      request.index === 3
        ? String(request.headers.authorization).replace('Bearer ', '')
        : request.index % 10 === 0
          ? 'llama-3'
          : `llama-3-build-${request.index}`;
    sendJson(response, 200, {
      id: `chatcmpl-${request.index}`,
      object: 'chat.completion',
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
    });
  });
}

/** The values of `label` in a Prometheus exposition. */
function labelValues(exposition: string, label: string): Set<string> {
  return new Set([...exposition.matchAll(new RegExp(`${label}="([^"]*)"`, 'g'))].map((match) => match[1]!));
}

describe('telemetry labels from a provider that names a new model in every response', () => {
  const servers: HttpTestServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  it('holds a bounded number of response models in /metrics and OTLP, and never the key', async () => {
    const receiver = await startHttpTestServer((_request, response) => sendJson(response, 200, {}));
    const model = await modelServer();
    servers.push(receiver, model);
    const { errors, output } = capture();
    const telemetry = await startTelemetry(
      { otlp: receiver.url, metricsPort: 0, logJson: false, environment: { GROQ_API_KEY: KEY } },
      output,
    );
    let exposition = '';
    try {
      const assistant = agent({
        name: 'chatter',
        model: openaiCompatible({ baseUrl: model.url, model: 'llama-3', apiKey: KEY, provider: 'groq' }),
      });
      telemetry.observe(assistant);
      for (let index = 0; index < RESPONSES; index++)
        expect((await assistant.run('hi')).status).toBe('completed');
      exposition = await (await fetch(`${telemetry.metricsServer!.url}`)).text();
    } finally {
      await telemetry.close();
    }
    expect(errors).toEqual([]);
    // The provider did receive the key and did send it back as its model name: what follows would prove nothing
    // otherwise.
    expect(model.requests).toHaveLength(RESPONSES);
    expect(model.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);

    // /metrics: the requested model, the first 4 others (the key among them, redacted), then _OTHER.
    expect(labelValues(exposition, 'gen_ai_response_model')).toEqual(
      new Set(['llama-3', 'llama-3-build-1', 'llama-3-build-2', '[redacted]', 'llama-3-build-4', '_OTHER']),
    );
    expect(exposition).toContain(
      `gen_ai_client_operation_duration_seconds_count{gen_ai_operation_name="chat",gen_ai_provider_name="groq",gen_ai_request_model="llama-3",gen_ai_response_model="_OTHER"} ${RESPONSES - RESPONSES / 10 - 4}`,
    );
    expect(exposition).not.toContain(KEY);

    // OTLP: the same bounded values on spans and metric points; the key nowhere.
    const responseModels = new Set(
      spansOf(receiver)
        .filter((span) => span.name === 'chat llama-3')
        .map((span) => attributesOf(span.attributes)['gen_ai.response.model']),
    );
    expect(responseModels).toEqual(labelValues(exposition, 'gen_ai_response_model'));
    const exported = receiver.requests.map((request) => request.body).join('\n');
    expect(exported).toContain('"gen_ai.response.model"');
    expect(exported).not.toContain(KEY);
  }, 120_000);

  it('keel run --otlp takes the secrets from its environment: the key a provider names as its model is not exported', async () => {
    const receiver = await startHttpTestServer((_request, response) => sendJson(response, 200, {}));
    const model = await startHttpTestServer((request, response) =>
      sendJson(response, 200, {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        model: String(request.headers.authorization).replace('Bearer ', ''),
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
      }),
    );
    servers.push(receiver, model);
    const directory = mkdtempSync(join(tmpdir(), 'keel-cli-labels-'));
    try {
      writeFileSync(
        join(directory, 'agent.yaml'),
        `name: chatter\nmodel: { provider: openai, name: llama-3, baseUrl: "${model.url}/v1", apiKeyEnv: GROQ_API_KEY }\n`,
      );
      const { errors, output } = capture();
      const code = await main(
        ['run', 'agent.yaml', 'hi', '--otlp', receiver.url, '--allow-key-host', '127.0.0.1', '--json'],
        { GROQ_API_KEY: KEY },
        output,
        directory,
      );
      expect({ code, errors }).toEqual({ code: 0, errors: [] });
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
    expect(model.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    const chat = spansOf(receiver).find((span) => span.name === 'chat llama-3')!;
    expect(attributesOf(chat.attributes)['gen_ai.response.model']).toBe('[redacted]');
    for (const request of receiver.requests) expect(request.body).not.toContain(KEY);
  });
});
