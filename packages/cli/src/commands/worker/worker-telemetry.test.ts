// `keel worker --metrics-port --otlp --log json` as an operator runs it: the built binary, a SQLite store in a scratch
// directory, the test Redis and an OTLP/HTTP receiver on 127.0.0.1. A run waits for approval under a first worker,
// which is stopped with SIGTERM; the approval goes through the queue and a second worker resumes the run.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type HttpTestServer, sendJson, startHttpTestServer } from '@keel/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FleetProcess, type WorkerLine, waitForLines } from '../../test-support/fleet-process.js';
import { runKeel } from '../../test-support/keel-cli.js';
import { attributesOf, metricNamesOf, spansOf } from '../../test-support/otlp-receiver.js';

const redisUrl = process.env.KEEL_TEST_REDIS_URL;
if (redisUrl === undefined)
  throw new Error('KEEL_TEST_REDIS_URL is not set: the vitest global setup starts Redis');
const directory = mkdtempSync(join(tmpdir(), 'keel-worker-telemetry-'));
const agentName = `tickets-${process.pid}-${Date.now().toString(36)}`;
writeFileSync(join(directory, 'tickets.yaml'), `name: ${agentName}\ntools: [create_ticket]\n`);
const store = join(directory, 'fleet.db');
const keel = (...args: string[]) => runKeel(directory, ...args);
const workerArgs = ['worker', 'tickets.yaml', '--store', store, '--redis', redisUrl];

let receiver: HttpTestServer;
beforeAll(async () => {
  receiver = await startHttpTestServer((_request, response) => sendJson(response, 200, {}));
});
afterAll(async () => {
  await receiver.close();
  rmSync(directory, { recursive: true, force: true });
});

/** The value of the one sample of `metric` with exactly these labels, in a Prometheus exposition. */
function sample(exposition: string, metric: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels)
    .map(([name, value]) => `${name}="${value}"`)
    .sort()
    .join(',');
  for (const line of exposition.split('\n')) {
    const match = /^([a-z_]+)\{(.*)\} (\S+)$/.exec(line);
    if (match?.[1] !== metric) continue;
    if (match[2]!.split(',').sort().join(',') === wanted) return Number(match[3]);
  }
  return undefined;
}

/** Starts a worker with `flags`; its lines go to the returned array. */
function startWorker(index: number, flags: string[]): { worker: FleetProcess; lines: WorkerLine[] } {
  const lines: WorkerLine[] = [];
  const worker = new FleetProcess(
    index,
    () => [...workerArgs, ...flags],
    directory,
    (line) => lines.push(line),
  );
  worker.start();
  return { worker, lines };
}

describe('keel worker with telemetry flags', () => {
  it('says them in --help and refuses bad ones, or a taken port, before taking any run', async () => {
    const help = await keel('worker', '--help');
    for (const flag of ['--metrics-port N', '--otlp URL', '--log json', 'keel_worker_runs_total'])
      expect(help.stdout).toContain(flag);
    expect(await keel(...workerArgs, '--metrics-port', '70000')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--metrics-port must be at most 65535'),
    });
    expect(await keel(...workerArgs, '--otlp', 'ftp://collector')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--otlp must be an http(s) URL'),
    });
    expect(await keel(...workerArgs, '--log', 'xml')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--log must be json or text, not "xml"'),
    });
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as { port: number }).port;
      expect(await keel(...workerArgs, '--metrics-port', String(port))).toMatchObject({
        code: 1,
        stderr: expect.stringContaining(`network.connection: Cannot serve metrics on 127.0.0.1:${port}`),
      });
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('serves /metrics for its whole life, exports each run over OTLP, flushes on SIGTERM, and links a resumed run to its first attempt', async () => {
    const submitted = await keel(
      'submit',
      'tickets.yaml',
      'Open an urgent ticket: the printer is on fire',
      '--store',
      store,
      '--redis',
      redisUrl,
      '--json',
    );
    expect(submitted).toMatchObject({ code: 0, stderr: '' });
    const { runId } = JSON.parse(submitted.stdout) as { runId: string };
    const agent = { agent_name: agentName };

    // A first worker (--json): the run waits for approval; /metrics is scraped after the run ended there.
    const first = startWorker(0, ['--json', '--metrics-port', '0', '--otlp', receiver.url]);
    let exposition: string;
    try {
      await waitForLines(first.worker, () =>
        first.lines.some((line) => line.type === 'run-finished' && line.runId === runId),
      );
      expect(first.lines.find((line) => line.type === 'run-finished')).toMatchObject({
        status: 'interrupted',
        stopReason: 'approval_required',
      });
      const metricsUrl = String(first.lines[0]!.metricsUrl);
      expect(first.lines[0]).toMatchObject({ type: 'worker-ready' });
      expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      exposition = await (await fetch(metricsUrl)).text();
    } finally {
      await first.worker.stop();
    }
    expect(first.worker.exitCode).toBe(0);
    // The run's metrics, as keel run has them...
    expect(
      sample(exposition, 'keel_runs_total', {
        ...agent,
        run_status: 'interrupted',
        run_stop_reason: 'approval_required',
      }),
    ).toBe(1);
    expect(sample(exposition, 'keel_runs_active', agent)).toBe(0);
    expect(exposition).toMatch(/^gen_ai_client_operation_duration_seconds_count\{.*\} [1-9]/m);
    // ...and the worker's own.
    const counted = (exposition: string, event: string) =>
      sample(exposition, 'keel_worker_runs_total', { ...agent, worker_event: event });
    expect(['taken', 'started', 'finished', 'resumed'].map((event) => counted(exposition, event))).toEqual([
      1, 1, 1, 0,
    ]);
    expect(sample(exposition, 'keel_retry_budget_remaining', { retry_budget_name: 'fleet' })).toBeGreaterThan(
      0,
    );
    // SIGTERM exported what the batch still held: the first attempt's span.
    const firstRoot = spansOf(receiver).find(
      (span) =>
        span.name === `invoke_agent ${agentName}` && attributesOf(span.attributes)['keel.run.id'] === runId,
    );
    expect(attributesOf(firstRoot!.attributes)).toMatchObject({
      'keel.run.status': 'interrupted',
      'keel.run.stop_reason': 'approval_required',
    });

    // The approval goes through the queue, to a second worker (--log json).
    const shown = JSON.parse((await keel('runs', 'show', runId, '--json', '--store', store)).stdout) as {
      run: { state: { pendingDecisions: { idempotencyKey: string }[] } };
    };
    const key = shown.run.state.pendingDecisions[0]!.idempotencyKey;
    const answered = await keel('resume', runId, '--approve', key, '--store', store, '--redis', redisUrl);
    expect(answered.code).toBe(0);
    const second = startWorker(1, ['--log', 'json', '--metrics-port', '0', '--otlp', receiver.url]);
    try {
      await waitForLines(second.worker, () =>
        second.lines.some((line) => line.event === 'run-end' && line.runId === runId),
      );
      const ready = second.lines.find((line) => line.event === 'worker-ready')!;
      exposition = await (await fetch(String(ready.metricsUrl))).text();
    } finally {
      await second.worker.stop();
    }
    expect(second.worker.exitCode).toBe(0);
    expect(counted(exposition, 'resumed')).toBe(1);
    expect(counted(exposition, 'finished')).toBe(1);
    expect(
      sample(exposition, 'keel_runs_total', {
        ...agent,
        run_status: 'completed',
        run_stop_reason: 'final_answer',
      }),
    ).toBe(1);
    expect(
      sample(exposition, 'keel_tool_calls_total', { gen_ai_tool_name: 'create_ticket', outcome: 'success' }),
    ).toBe(1);

    // --log json: pino lines of the run's events and of the worker's own, none said twice.
    expect(second.lines.every((line) => line.component === 'keel' && typeof line.level === 'number')).toBe(
      true,
    );
    const events = second.lines.map((line) => line.event);
    expect(events[0]).toBe('worker-ready');
    expect(events).toEqual(
      expect.arrayContaining(['run-taken', 'run-resumed', 'tool-call-end', 'run-end', 'worker-stopped']),
    );
    expect(events).not.toContain('run-started');
    expect(events).not.toContain('run-finished');
    expect(second.lines.find((line) => line.event === 'run-end')).toMatchObject({ status: 'completed' });

    // --otlp: the resumed attempt's span, exported on SIGTERM, links to the first one; the ticket's call is its child.
    const roots = spansOf(receiver).filter(
      (span) =>
        span.name === `invoke_agent ${agentName}` && attributesOf(span.attributes)['keel.run.id'] === runId,
    );
    expect(roots).toHaveLength(2);
    const resumed = roots.find((span) => span.spanId !== firstRoot!.spanId)!;
    expect(attributesOf(resumed.attributes)).toMatchObject({
      'keel.run.resumed': true,
      'keel.run.status': 'completed',
    });
    expect(resumed.links?.map((link) => link.spanId)).toEqual([firstRoot!.spanId]);
    const ticket = spansOf(receiver).find((span) => span.name === 'execute_tool create_ticket')!;
    expect(ticket.parentSpanId).toBe(resumed.spanId);
    const toolLine = second.lines.find((line) => line.event === 'tool-call-end')!;
    expect(toolLine.trace_id).toBe(resumed.traceId);
    expect(metricNamesOf(receiver)).toEqual(
      expect.arrayContaining(['keel.runs', 'keel.worker.runs', 'gen_ai.client.operation.duration']),
    );
  });
});
