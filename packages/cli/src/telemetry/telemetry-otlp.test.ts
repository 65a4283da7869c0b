// The OTLP export of the command line against a real OTLP/HTTP receiver on 127.0.0.1: the standard variables that
// describe the process, and a last export that cannot hold the process when the receiver does not answer.
import { agent } from '@keel/core';
import { type HttpTestServer, scriptedModel, sendJson, startHttpTestServer } from '@keel/core/testing';
import { openaiCompatible } from '@keel/openai';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../main.js';
import type { Output } from '../output/output.js';
import { attributesOf } from '../test-support/otlp-receiver.js';
import { FINAL_EXPORT_TIMEOUT_MS, resourceAttributesOf, startTelemetry } from './telemetry.js';

function capture() {
  const errors: string[] = [];
  const output: Output = { out: () => undefined, error: (line) => errors.push(line), colour: false };
  return { errors, output };
}

describe('the OTLP export of keel run, resume and worker', () => {
  const servers: HttpTestServer[] = [];
  afterEach(async () => {
    vi.useRealTimers();
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  it('describes the process with OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES', async () => {
    const receiver = await startHttpTestServer((_request, response) => sendJson(response, 200, {}));
    servers.push(receiver);
    const { errors, output } = capture();
    const environment = {
      OTEL_SERVICE_NAME: 'checkout-agent',
      OTEL_RESOURCE_ATTRIBUTES:
        'service.name=ignored,deployment.environment=staging, team = payments%20and%20risk',
    };
    const telemetry = await startTelemetry({ otlp: receiver.url, logJson: false, environment }, output);
    try {
      const assistant = agent({ model: openaiCompatible({ baseUrl: 'http://127.0.0.1:9', model: 'm' }) });
      telemetry.observe(assistant);
      await assistant.run('hi', { signal: AbortSignal.abort() });
    } finally {
      await telemetry.close();
    }
    expect(errors).toEqual([]);
    const resources = receiver.requests
      .filter((request) => request.url === '/v1/traces')
      .flatMap((request) =>
        (request.json() as { resourceSpans: { resource: { attributes: never[] } }[] }).resourceSpans.map(
          (entry) => attributesOf(entry.resource.attributes),
        ),
      );
    expect(resources.length).toBeGreaterThan(0);
    for (const resource of resources) {
      expect(resource).toMatchObject({
        'service.name': 'checkout-agent',
        'deployment.environment': 'staging',
        team: 'payments and risk',
      });
    }
  });

  it('ignores a malformed OTEL_RESOURCE_ATTRIBUTES whole, with a warning, and names the service keel by default', () => {
    const { errors, output } = capture();
    expect(resourceAttributesOf({}, output)).toEqual({ 'service.name': 'keel' });
    expect(resourceAttributesOf({ OTEL_RESOURCE_ATTRIBUTES: 'team=a,broken,zone=b%ZZ' }, output)).toEqual({
      'service.name': 'keel',
    });
    expect(resourceAttributesOf({ OTEL_RESOURCE_ATTRIBUTES: 'zone=b%ZZ' }, output)).toEqual({
      'service.name': 'keel',
    });
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatch(/^otlp: OTEL_RESOURCE_ATTRIBUTES is ignored: it must be key=value pairs/);
  });

  it('gives up on the last export after FINAL_EXPORT_TIMEOUT_MS when the receiver does not answer', async () => {
    // A receiver that accepts connections and never answers: the export waits on it.
    const receiver = await startHttpTestServer(() => undefined);
    servers.push(receiver);
    const { errors, output } = capture();
    const telemetry = await startTelemetry({ otlp: receiver.url, logJson: false }, output);
    const assistant = agent({ model: scriptedModel([{ content: 'done' }]) });
    telemetry.observe(assistant);
    expect((await assistant.run('hi')).status).toBe('completed');

    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let closed = false;
    const closing = telemetry.close().then(() => {
      closed = true;
    });
    await vi.advanceTimersByTimeAsync(FINAL_EXPORT_TIMEOUT_MS);
    expect(closed).toBe(true);
    await closing;
    expect(errors).toEqual([
      `otlp: gave up on the last export after ${FINAL_EXPORT_TIMEOUT_MS} ms (is the receiver at ${receiver.url} up?)`,
    ]);
  });

  it('says in --help what --metrics-port is for, and how long the last export may wait', async () => {
    const lines: string[] = [];
    const output: Output = { out: (line) => lines.push(line), error: () => undefined, colour: false };
    expect(await main(['--help'], {}, output)).toBe(0);
    const help = lines.join('\n').replace(/\s+/g, ' ');
    expect(help).toContain(
      '--metrics-port N serve Prometheus metrics at http://127.0.0.1:N/metrics while the run',
    );
    expect(help).toContain('meant for long runs and keel worker');
    expect(help).toContain('for short runs use --otlp');
    expect(help).toContain(
      `the last export, as the command ends, waits at most ${FINAL_EXPORT_TIMEOUT_MS / 1_000} s`,
    );
    expect(help).toContain('OTEL_SERVICE_NAME');
  });
});
