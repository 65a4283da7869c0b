// When servers start and stop: lazily, on close, when a signal aborts, and when the process that started them ends in
// any way. Every check of "no process left" is by pid. The child-process cases run the built package (npm run build).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { consecutive } from '@keel/core';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { FIXTURE_SERVER, isAlive, keelErrorOf, toolContext } from './fixtures/servers.js';
import type { McpTool } from './mcp-tool.js';
import { type McpToolset, mcpTools } from './toolset.js';

const AGENT_PROCESS = fileURLToPath(new URL('./fixtures/agent-process.mjs', import.meta.url));
/** Waiting for a real process to go: bounded, polled. */
const GONE = { timeout: 5_000, interval: 20 };

const directory = mkdtempSync(join(tmpdir(), 'keel-mcp-lifecycle-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const opened: McpToolset[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((toolset) => toolset.close()));
});

function fixture(options: Partial<Parameters<typeof mcpTools>[0]> = {}): McpToolset {
  const toolset = mcpTools({
    command: process.execPath,
    args: [FIXTURE_SERVER],
    closeGraceMs: 300,
    ...options,
  });
  opened.push(toolset);
  return toolset;
}

function named(tools: readonly McpTool[], name: string): McpTool {
  const found = tools.find((tool) => tool.name === name);
  if (found === undefined) throw new Error(`no tool ${name}`);
  return found;
}

describe('a toolset in this process', () => {
  it('starts nothing until its tools are asked for, and close() leaves no process', async () => {
    const toolset = fixture();
    expect(toolset.state).toBe('idle');
    expect(toolset.pid).toBeUndefined();
    expect(toolset.current).toEqual([]);

    const tools = await toolset.tools();
    const pid = toolset.pid ?? -1;
    expect(toolset.state).toBe('connected');
    expect(isAlive(pid)).toBe(true);

    await toolset.close();
    expect(toolset.state).toBe('closed');
    expect(isAlive(pid)).toBe(false);
    expect(await keelErrorOf(named(tools, 'echo').execute({ text: 'x' }, toolContext()))).toMatchObject({
      code: 'tool.unavailable',
      data: { phase: 'closed' },
    });
    expect((await keelErrorOf(toolset.tools())).code).toBe('tool.unavailable');
    await toolset.close();
  });

  it('close() cancels the calls in flight: the server is told, they end tool.unavailable, the breaker ignores them', async () => {
    const log = join(directory, 'close-in-flight.jsonl');
    writeFileSync(log, '');
    let started: () => void = () => {};
    const startedSeen = new Promise<void>((resolve) => {
      started = resolve;
    });
    const toolset = fixture({
      env: { FIXTURE_LOG: log },
      onProgress: () => started(),
      breaker: { strategy: consecutive({ threshold: 1 }) },
    });
    const tools = await toolset.connect();
    const pid = toolset.pid ?? -1;
    const call = keelErrorOf(named(tools, 'hang').execute({}, toolContext()));
    await startedSeen;
    await toolset.close();
    expect(await call).toMatchObject({ code: 'tool.unavailable', data: { phase: 'closed' } });
    expect(toolset.breaker?.state).toBe('closed');
    expect(isAlive(pid)).toBe(false);
    const entries = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(entries.filter((entry) => entry.cancelled !== undefined)).toEqual([
      { pid, cancelled: expect.objectContaining({ reason: expect.stringMatching(/toolset was closed/) }) },
    ]);
  });

  it('a server lost while idle is started again only when a call needs it', async () => {
    const toolset = fixture();
    const tools = await toolset.connect();
    const pid = toolset.pid ?? -1;
    process.kill(pid, 'SIGKILL');
    await vi.waitFor(() => expect(toolset.state).toBe('idle'), GONE);
    // The list is still known: asking for it does not start a server.
    expect(await toolset.tools()).toBe(tools);
    expect(toolset.state).toBe('idle');
    expect(await named(tools, 'echo').execute({ text: 'again' }, toolContext())).toBe('again');
    expect(toolset.pid).not.toBe(pid);
  });

  it('the signal option closes the toolset when it aborts', async () => {
    const controller = new AbortController();
    const toolset = fixture({ signal: controller.signal });
    await toolset.connect();
    const pid = toolset.pid ?? -1;
    controller.abort();
    expect(toolset.state).toBe('closed');
    await toolset.close();
    expect(isAlive(pid)).toBe(false);
  });

  it('a toolset given an aborted signal never starts a server', async () => {
    const toolset = fixture({ signal: AbortSignal.abort() });
    expect(toolset.state).toBe('closed');
    expect((await keelErrorOf(toolset.connect())).data.phase).toBe('closed');
  });

  it('ends the whole process group: a server behind a shell wrapper is stopped too', async () => {
    // `sh -c '...; true'` keeps the shell as the parent; the server outlives the end of its stdin (FIXTURE_LINGER).
    const toolset = fixture({
      command: 'sh',
      args: ['-c', `"${process.execPath}" "${FIXTURE_SERVER}"; true`],
      env: { FIXTURE_LINGER: '1' },
    });
    const tools = await toolset.connect();
    const shellPid = toolset.pid ?? -1;
    const serverPid = Number(await named(tools, 'pid').execute({}, toolContext()));
    expect(serverPid).not.toBe(shellPid);
    await toolset.close();
    expect(isAlive(shellPid)).toBe(false);
    await vi.waitFor(() => expect(isAlive(serverPid)).toBe(false), GONE);
  });

  it('with processGroup false, only the server process itself is signalled', async () => {
    const toolset = fixture({
      command: 'sh',
      args: ['-c', `"${process.execPath}" "${FIXTURE_SERVER}"; true`],
      env: { FIXTURE_LINGER: '1' },
      processGroup: false,
    });
    const tools = await toolset.connect();
    const shellPid = toolset.pid ?? -1;
    const serverPid = Number(await named(tools, 'pid').execute({}, toolContext()));
    try {
      await toolset.close();
      expect(isAlive(shellPid)).toBe(false);
      // The shell's child, which ignores the end of its stdin, outlived it: what the process group is for.
      expect(isAlive(serverPid)).toBe(true);
    } finally {
      if (isAlive(serverPid)) process.kill(serverPid, 'SIGKILL');
    }
  });
});

describe('the process that started the server ends', () => {
  async function startAgentProcess(
    how: 'exit' | 'return' | 'wait',
  ): Promise<{ child: ChildProcess; server: number }> {
    const child = spawn(process.execPath, [AGENT_PROCESS, how], { stdio: ['ignore', 'pipe', 'inherit'] });
    const server = await new Promise<number>((resolve, reject) => {
      let output = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
        const match = /server (\d+)/.exec(output);
        if (match !== null) resolve(Number(match[1]));
      });
      child.once('exit', (code) => reject(new Error(`the agent process exited with ${code}: ${output}`)));
    });
    return { child, server };
  }

  function exited(child: ChildProcess): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => child.once('exit', () => resolve()));
  }

  it('with process.exit() and no close(): the server is killed on the way out', async () => {
    const { child, server } = await startAgentProcess('exit');
    await exited(child);
    expect(child.exitCode).toBe(0);
    await vi.waitFor(() => expect(isAlive(server)).toBe(false), GONE);
  });

  it('by finishing its work: an idle server does not keep it alive, and goes with it', async () => {
    const { child, server } = await startAgentProcess('return');
    await exited(child);
    expect(child.exitCode).toBe(0);
    await vi.waitFor(() => expect(isAlive(server)).toBe(false), GONE);
  });

  it('killed with SIGKILL: the server sees its stdin end and exits', async () => {
    const { child, server } = await startAgentProcess('wait');
    expect(isAlive(server)).toBe(true);
    child.kill('SIGKILL');
    await exited(child);
    await vi.waitFor(() => expect(isAlive(server)).toBe(false), GONE);
  });
});
