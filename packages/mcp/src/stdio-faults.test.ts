// Servers that die, hang, close their stream, answer with protocol errors or change their tools, over stdio: every
// call ends typed and in bounded time, the server hears about cancellations, and a later call reconnects.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '@keel/core/testing';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { EVERYTHING_SERVER, FIXTURE_SERVER, isAlive, keelErrorOf, toolContext } from './fixtures/servers.js';
import type { McpTool } from './mcp-tool.js';
import type { McpProgressEvent, McpStdioOptions } from './options.js';
import { type McpToolset, mcpTools } from './toolset.js';

const directory = mkdtempSync(join(tmpdir(), 'keel-mcp-faults-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const opened: McpToolset[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(opened.splice(0).map((toolset) => toolset.close()));
});

let logCount = 0;

/** The fixture server over stdio, with its own log file; `progress` receives every progress event. */
function fixture(options: Partial<McpStdioOptions> = {}, env: Record<string, string> = {}) {
  const log = join(directory, `log-${++logCount}.jsonl`);
  writeFileSync(log, '');
  const started: Array<(event: McpProgressEvent) => void> = [];
  const toolset = mcpTools({
    command: process.execPath,
    args: [FIXTURE_SERVER],
    prefix: 'fixture',
    env: { FIXTURE_LOG: log, ...env },
    timeoutMs: 5_000,
    closeGraceMs: 500,
    onProgress: (event) => started.shift()?.(event),
    ...options,
  });
  opened.push(toolset);
  return {
    toolset,
    /** Resolves at the next progress event (a hanging call reports one when it starts). */
    nextProgress: () => new Promise<McpProgressEvent>((resolve) => started.push(resolve)),
    entries: () =>
      readFileSync(log, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

function named(tools: readonly McpTool[], name: string): McpTool {
  const found = tools.find((tool) => tool.name === name);
  if (found === undefined) throw new Error(`no tool ${name}`);
  return found;
}

describe('a server that dies or closes its stream', () => {
  it('SIGKILLed mid-call: the call ends tool.unavailable at once, and the next call starts a new server', async () => {
    let progressed: () => void = () => {};
    const progressSeen = new Promise<void>((resolve) => {
      progressed = resolve;
    });
    const everything = mcpTools({
      command: process.execPath,
      args: [EVERYTHING_SERVER, 'stdio'],
      timeoutMs: 30_000,
      onProgress: () => progressed(),
    });
    opened.push(everything);
    const tools = await everything.connect();
    const firstPid = everything.pid ?? -1;

    const call = keelErrorOf(
      named(tools, 'trigger-long-running-operation').execute({ duration: 5, steps: 50 }, toolContext()),
    );
    await progressSeen;
    process.kill(firstPid, 'SIGKILL');
    const error = await call;

    expect(error.code).toBe('tool.unavailable');
    expect(error.data).toMatchObject({
      server: 'node',
      tool: 'trigger-long-running-operation',
      phase: 'in-flight',
    });
    // The tool is read-only, so running it again is harmless: the agent may retry it.
    expect(error.retryable).toBe(true);
    expect(error.guidance).toMatch(/may or may not have taken effect/);
    expect(everything.state).toBe('idle');

    expect(await named(tools, 'echo').execute({ message: 'again' }, toolContext())).toBe('Echo: again');
    expect(everything.pid).not.toBe(firstPid);
    expect(isAlive(firstPid)).toBe(false);
  });

  it('exiting mid-call: a tool with side effects is not retryable, since it may have run', async () => {
    const { toolset } = fixture();
    const tools = await toolset.connect();
    const pid = toolset.pid ?? -1;
    const error = await keelErrorOf(named(tools, 'fixture_exit_now').execute({}, toolContext()));
    expect(error.code).toBe('tool.unavailable');
    expect(error.retryable).toBe(false);
    expect(error.data.phase).toBe('in-flight');
    expect(await named(tools, 'fixture_echo').execute({ text: 'back' }, toolContext())).toBe('back');
    expect(toolset.pid).not.toBe(pid);
  });

  it('closing its stdout mid-call: the call ends at once and the lingering server is stopped', async () => {
    const { toolset } = fixture();
    const tools = await toolset.connect();
    const pid = toolset.pid ?? -1;
    const error = await keelErrorOf(named(tools, 'fixture_close_stdout').execute({}, toolContext()));
    expect(error.code).toBe('tool.unavailable');
    expect(error.data.phase).toBe('in-flight');
    // The server kept running with its stdout closed: close() waits until the stop (stdin end, SIGTERM) took it.
    await toolset.close();
    expect(isAlive(pid)).toBe(false);
  });
});

describe('timeouts and cancellation', () => {
  it('a hung call times out as tool.timeout, and the server is sent notifications/cancelled', async () => {
    const { toolset, nextProgress, entries } = fixture({ timeoutMs: 60_000 });
    const tools = await toolset.connect();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const started = nextProgress();
    const call = keelErrorOf(named(tools, 'fixture_hang').execute({}, toolContext()));
    await started;
    await vi.advanceTimersByTimeAsync(59_999);
    expect(toolset.state).toBe('connected');
    await vi.advanceTimersByTimeAsync(1);
    const error = await call;
    vi.useRealTimers();

    expect(error.code).toBe('tool.timeout');
    expect(error.data).toMatchObject({ server: 'fixture', tool: 'hang', timeoutMs: 60_000 });
    // Messages are handled in order: once echo answers, the cancellation sent before it has been seen.
    expect(await named(tools, 'fixture_echo').execute({ text: 'x' }, toolContext())).toBe('x');
    const startedEntry = entries().find((entry) => entry.started === 'hang');
    expect(entries().filter((entry) => entry.cancelled !== undefined)).toEqual([
      {
        pid: toolset.pid,
        cancelled: { requestId: startedEntry?.requestId, reason: expect.stringMatching(/timed out/) },
      },
    ]);
  });

  it("the tool's signal cancels the call: it rejects with the signal's reason and the server is told", async () => {
    const { toolset, nextProgress, entries } = fixture();
    const tools = await toolset.connect();
    const controller = new AbortController();
    const started = nextProgress();
    const call = named(tools, 'fixture_hang').execute({}, toolContext(controller.signal));
    await started;
    const reason = new Error('the run was cancelled');
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
    await named(tools, 'fixture_echo').execute({ text: 'x' }, toolContext());
    expect(entries().filter((entry) => entry.cancelled !== undefined)).toEqual([
      { pid: toolset.pid, cancelled: expect.objectContaining({ reason: 'Error: the run was cancelled' }) },
    ]);
  });

  it('a server that never answers the handshake is tool.unavailable after connectTimeoutMs', async () => {
    const { toolset } = fixture({ args: [FIXTURE_SERVER, 'silent'], connectTimeoutMs: 3_000 });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const connecting = keelErrorOf(toolset.connect());
    await vi.advanceTimersByTimeAsync(3_000);
    const error = await connecting;
    vi.useRealTimers();
    expect(error.code).toBe('tool.unavailable');
    expect(error.data).toMatchObject({ phase: 'connect', transport: 'stdio' });
    expect(error.message).toMatch(/no MCP handshake within 3000 ms/);
  });
});

describe('servers that cannot start', () => {
  it('a missing program is tool.unavailable naming it', async () => {
    const { toolset } = fixture({ command: 'keel-no-such-mcp-server' });
    const error = await keelErrorOf(toolset.connect());
    expect(error.code).toBe('tool.unavailable');
    expect(error.message).toMatch(/spawn keel-no-such-mcp-server ENOENT/);
  });

  it('a server that exits at start is tool.unavailable with its last stderr lines', async () => {
    const crashFile = join(directory, 'crash-now');
    writeFileSync(crashFile, '');
    const { toolset } = fixture({}, { FIXTURE_CRASH_FILE: crashFile });
    const error = await keelErrorOf(toolset.connect());
    expect(error.code).toBe('tool.unavailable');
    expect(error.data.phase).toBe('connect');
    expect(error.message).toMatch(/fixture: crashing on purpose at start/);
  });
});

describe('errors the server reports', () => {
  it('maps JSON-RPC errors to their own codes', async () => {
    const { toolset } = fixture();
    const tools = await toolset.connect();
    const internal = await keelErrorOf(named(tools, 'fixture_protocol_error').execute({}, toolContext()));
    expect(internal.code).toBe('tool.failed');
    expect(internal.data).toMatchObject({ mcpCode: -32603, reason: 'server' });
    expect(internal.message).toMatch(/the fixture failed inside/);
    const invalid = await keelErrorOf(named(tools, 'fixture_strict').execute({}, toolContext()));
    expect(invalid.code).toBe('tool.invalid_input');
    expect(invalid.message).toMatch(/argument "x" is required/);
    const unknown = await keelErrorOf(named(tools, 'fixture_forget').execute({}, toolContext()));
    expect(unknown.code).toBe('tool.not_found');
    // None of these says the server is unhealthy: the connection and the breaker are as they were.
    expect(toolset.state).toBe('connected');
    expect(toolset.breaker?.state).toBe('closed');
  });
});

describe('tools', () => {
  it('maps names, annotations and approval, and leaves out task-only tools', async () => {
    const { toolset } = fixture({ destructiveNeedsApproval: true, exclude: ['pid'] });
    const tools = await toolset.connect();
    const names = tools.map((tool) => tool.name);
    expect(names).toContain('fixture_git_log');
    expect(names).not.toContain('fixture_task_only');
    expect(names).not.toContain('fixture_pid');
    // No annotations: destructive by the MCP defaults; destructiveHint false or readOnlyHint true: not.
    expect(named(tools, 'fixture_delete_everything').needsApproval).toBe(true);
    expect(named(tools, 'fixture_slow_write').needsApproval).toBeUndefined();
    expect(named(tools, 'fixture_echo').needsApproval).toBeUndefined();
    expect(named(tools, 'fixture_slow_write').idempotent).toBe(false);
    expect(await named(tools, 'fixture_git_log').validate({})).toEqual({ success: true, value: {} });
  });

  it('include offers only the tools named', async () => {
    const { toolset } = fixture({ include: ['echo', 'hang'], prefix: undefined });
    expect((await toolset.tools()).map((tool) => tool.name)).toEqual(['echo', 'hang']);
  });

  it('tools/list_changed lists again: new tools appear, unchanged tools keep their identity', async () => {
    const { toolset } = fixture();
    const before = await toolset.tools();
    const changed = new Promise<readonly McpTool[]>((resolve) => toolset.onToolsChanged(resolve));
    expect(await named(before, 'fixture_add_tool').execute({}, toolContext())).toBe('added');
    const after = await changed;
    expect(after.map((tool) => tool.name)).toContain('fixture_extra');
    expect(toolset.current).toBe(after);
    expect(await toolset.tools()).toBe(after);
    expect(named(after, 'fixture_echo')).toBe(named(before, 'fixture_echo'));
    expect(await named(after, 'fixture_extra').execute({}, toolContext())).toBe('extra');
  });
});

describe('the breaker per server', () => {
  it('opens after repeated failures, refuses at once, and reconnects after growing open periods', async () => {
    const clock = new FakeClock();
    const crashFile = join(directory, 'crash-later');
    const { toolset, entries } = fixture({ clock }, { FIXTURE_CRASH_FILE: crashFile });
    const tools = await toolset.connect();
    const echo = named(tools, 'fixture_echo');
    writeFileSync(crashFile, '');
    const codes = async () => {
      const error = await keelErrorOf(echo.execute({ text: 'x' }, toolContext()));
      return [error.code, error.data.phase, error.retryAfterMs];
    };

    expect((await keelErrorOf(named(tools, 'fixture_exit_now').execute({}, toolContext()))).data.phase).toBe(
      'in-flight',
    );
    expect(await codes()).toEqual(['tool.unavailable', 'connect', undefined]);
    expect(await codes()).toEqual(['tool.unavailable', 'connect', undefined]);
    expect(toolset.breaker?.state).toBe('open');
    const refused = await keelErrorOf(echo.execute({ text: 'x' }, toolContext()));
    expect(refused).toMatchObject({ code: 'tool.unavailable', retryable: false, retryAfterMs: 1_000 });
    expect(refused.guidance).toMatch(/Do not call tools of the MCP server "fixture" again/);

    await clock.advance(1_000);
    expect(await codes()).toEqual(['tool.unavailable', 'connect', undefined]);
    expect(await codes()).toEqual(['tool.unavailable', 'breaker-open', 2_000]);

    rmSync(crashFile);
    await clock.advance(2_000);
    expect(await echo.execute({ text: 'back' }, toolContext())).toBe('back');
    expect(toolset.breaker?.state).toBe('closed');
    // Three servers crashed at start: none was started while the breaker was open.
    expect(entries().filter((entry) => entry.crashed === true)).toHaveLength(3);
  });
});
