// Whole agent runs with MCP tools: on the simulated provider over real HTTP (its default brain picks the tools), and
// on a scripted model where a test needs exact steps: a server killed mid-call, a hung call, a cancelled run.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agent, type Message, type RunEvent } from '@keel/core';
import { FakeClock, scriptedModel } from '@keel/core/testing';
import { type SimulatedProvider, simulated } from '@keel/simulated';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  EVERYTHING_SERVER,
  FIXTURE_SERVER,
  freePort,
  type HttpServerProcess,
  isAlive,
  startHttpServer,
} from './fixtures/servers.js';
import { type McpToolset, mcpTools } from './toolset.js';

const directory = mkdtempSync(join(tmpdir(), 'keel-mcp-agent-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const opened: McpToolset[] = [];
const models: SimulatedProvider[] = [];
const servers: HttpServerProcess[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((toolset) => toolset.close()));
  await Promise.all(models.splice(0).map((model) => model.close()));
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

function open(options: Parameters<typeof mcpTools>[0]): McpToolset {
  const toolset = mcpTools(options);
  opened.push(toolset);
  return toolset;
}

function model(): SimulatedProvider {
  const provider = simulated();
  models.push(provider);
  return provider;
}

/** The tool messages of a conversation, parsed. */
function toolResults(messages: readonly Message[]): Array<Record<string, unknown>> {
  return messages
    .filter((message) => message.role === 'tool')
    .map((message) => JSON.parse(message.content) as Record<string, unknown>);
}

function fixtureLog(): { path: string; entries: () => Array<Record<string, unknown>> } {
  const path = join(directory, `log-${Math.random().toString(36).slice(2)}.jsonl`);
  writeFileSync(path, '');
  return {
    path,
    entries: () =>
      readFileSync(path, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/** Calls `action` at the first `tool-call-progress` event (a hanging fixture call reports one when it starts). */
function onFirstProgress(action: (event: RunEvent) => void): (event: RunEvent) => void {
  let seen = false;
  return (event) => {
    if (event.type !== 'tool-call-progress' || seen) return;
    seen = true;
    action(event);
  };
}

describe('an agent with MCP tools on the simulated provider', () => {
  it('over stdio: the model calls the server-everything tool it needs and answers from the result', async () => {
    const everything = open({
      command: process.execPath,
      args: [EVERYTHING_SERVER, 'stdio'],
      prefix: 'everything',
    });
    const assistant = agent({ model: model(), tools: await everything.tools() });
    const result = await assistant.run('Echo hello');
    expect(result.status).toBe('completed');
    expect(toolResults(result.messages)).toContainEqual({
      status: 'success',
      content: expect.stringMatching(/^Echo: /),
    });
    expect(result.report.toolCalls.byTool).toEqual({ everything_echo: 1 });
    expect(result.report.toolCalls.errors).toBe(0);
    expect(result.output).toMatch(/Echo: /);
  });

  it('over Streamable HTTP: the same, with the server started by the test', async () => {
    const port = await freePort();
    const server = await startHttpServer([EVERYTHING_SERVER, 'streamableHttp'], {
      env: { PORT: String(port) },
      ready: /listening on port/,
      port,
      path: '/mcp',
    });
    servers.push(server);
    const web = open({ url: server.url, prefix: 'web' });
    const assistant = agent({ model: model(), tools: await web.tools() });
    const result = await assistant.run('What is the sum of 2 and 40?');
    expect(result.status).toBe('completed');
    expect(toolResults(result.messages)).toContainEqual({
      status: 'success',
      content: expect.stringMatching(/^The sum of /),
    });
    expect(result.report.toolCalls.byTool).toEqual({ 'web_get-sum': 1 });
    expect(result.report.toolCalls.errors).toBe(0);
  });
});

describe('an agent with MCP tools on a scripted model', () => {
  it("turns the server's progress notifications into tool-call-progress run events", async () => {
    const everything = open({ command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] });
    const tools = await everything.tools();
    const events: RunEvent[] = [];
    const assistant = agent({
      model: scriptedModel([
        { toolCalls: [{ name: 'trigger-long-running-operation', arguments: { duration: 0.2, steps: 2 } }] },
        { content: 'done' },
      ]),
      tools,
    });
    const result = await assistant.run('go', { onEvent: (event) => events.push(event) });
    expect(result.status).toBe('completed');
    expect(events.filter((event) => event.type === 'tool-call-progress')).toEqual(
      [1, 2].map((progress) => ({
        type: 'tool-call-progress',
        runId: result.runId,
        atMs: expect.any(Number),
        step: 1,
        callIndex: 0,
        toolName: 'trigger-long-running-operation',
        idempotencyKey: `${result.runId}:1:0`,
        progress,
        total: 2,
      })),
    );
  });

  it('a server SIGKILLed mid-call: the model sees an unknown outcome as data, and its next call reconnects', async () => {
    const log = fixtureLog();
    const fixture = open({
      command: process.execPath,
      args: [FIXTURE_SERVER],
      env: { FIXTURE_LOG: log.path },
    });
    const tools = await fixture.tools();
    const firstPid = fixture.pid ?? -1;
    const model = scriptedModel([
      { toolCalls: [{ name: 'slow_write' }] },
      { toolCalls: [{ name: 'echo', arguments: { text: 'still there?' } }] },
      { content: 'recovered' },
    ]);
    const assistant = agent({ model, tools });
    const result = await assistant.run('write', {
      onEvent: onFirstProgress(() => process.kill(firstPid, 'SIGKILL')),
    });

    expect(result.status).toBe('completed');
    const [killed, echoed] = toolResults(result.messages);
    expect(killed).toMatchObject({
      status: 'error',
      // slow_write has side effects and its server died inside the call: it may have run.
      error: {
        code: 'tool.outcome_unknown',
        retryable: false,
        data: { errorCode: 'tool.unavailable', outcome: 'unknown', toolName: 'slow_write' },
      },
      guidance: expect.stringMatching(/may or may not have taken effect/),
    });
    expect(echoed).toEqual({ status: 'success', content: 'still there?' });
    expect(result.report.errors.byCode).toEqual({ 'tool.unavailable': 1 });
    expect(result.report.uncertainCalls).toMatchObject({ total: 1, byTool: { slow_write: 1 } });
    // slow_write has side effects: not retried behind the model's back.
    expect(result.report.retries.total).toBe(0);
    expect(fixture.pid).not.toBe(firstPid);
    expect(isAlive(firstPid)).toBe(false);
  });

  it('a hung call times out (the agent clock is fake) and the server is sent notifications/cancelled', async () => {
    const log = fixtureLog();
    const fixture = open({
      command: process.execPath,
      args: [FIXTURE_SERVER],
      env: { FIXTURE_LOG: log.path },
      timeoutMs: 30_000,
    });
    const tools = await fixture.tools();
    const clock = new FakeClock();
    let started: () => void = () => {};
    const startedSeen = new Promise<void>((resolve) => {
      started = resolve;
    });
    const assistant = agent({
      model: scriptedModel([{ toolCalls: [{ name: 'hang' }] }, { content: 'it hung' }]),
      tools,
      clock,
      retry: { toolMaxAttempts: 1 },
    });
    const running = assistant.run('go', { onEvent: onFirstProgress(() => started()) });
    await startedSeen;
    await clock.advance(30_000);
    const result = await running;

    expect(result.status).toBe('completed');
    expect(toolResults(result.messages)).toMatchObject([
      { status: 'error', error: { code: 'tool.timeout' } },
    ]);
    // The connection lives on: a call after the timeout is answered, after the cancellation sent before it.
    await tools
      .find((tool) => tool.name === 'echo')
      ?.execute(
        { text: 'x' },
        {
          signal: new AbortController().signal,
          idempotencyKey: 'k',
          runId: 'r',
          step: 1,
          callIndex: 0,
          attempt: 1,
        },
      );
    const startedEntry = log.entries().find((entry) => entry.started === 'hang');
    expect(log.entries().filter((entry) => entry.cancelled !== undefined)).toEqual([
      { pid: fixture.pid, cancelled: expect.objectContaining({ requestId: startedEntry?.requestId }) },
    ]);
  });

  it('a cancelled run sends notifications/cancelled and leaves no server process behind', async () => {
    const log = fixtureLog();
    const controller = new AbortController();
    // The toolset lives as long as the run: its signal is the run's.
    const fixture = open({
      command: process.execPath,
      args: [FIXTURE_SERVER],
      env: { FIXTURE_LOG: log.path },
      signal: controller.signal,
    });
    const tools = await fixture.tools();
    const pid = fixture.pid ?? -1;
    const assistant = agent({ model: scriptedModel([{ toolCalls: [{ name: 'hang' }] }]), tools });
    const result = await assistant.run('go', {
      signal: controller.signal,
      onEvent: onFirstProgress(() => controller.abort()),
    });

    expect(result.status).toBe('cancelled');
    expect(result.error?.code).toBe('run.cancelled');
    await fixture.close();
    expect(isAlive(pid)).toBe(false);
    const startedEntry = log.entries().find((entry) => entry.started === 'hang');
    expect(log.entries().filter((entry) => entry.cancelled !== undefined)).toEqual([
      { pid, cancelled: expect.objectContaining({ requestId: startedEntry?.requestId }) },
    ]);
  });
});
