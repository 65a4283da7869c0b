// Tools declared in agent files, called in whole `keel run`s on the offline simulated provider: a command tool (a real
// child process), an HTTP tool (a real server on 127.0.0.1, let through the SSRF guard by `allow:`), and an MCP
// server started at the agent's first step and gone, checked by pid, when the command ends.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { MemoryRunStore } from '@keel/core';
import { type HttpTestServer, sendJson, startHttpTestServer } from '@keel/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAgent } from '../build/build-agent.js';
import { chatCommand } from '../commands/chat/chat.js';
import { main } from '../main.js';
import type { Output } from '../output/output.js';

const directory = mkdtempSync(join(tmpdir(), 'keel-file-tools-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
/** The MCP fixture server of @keel/mcp: its `pid` tool answers with the server's process id. */
const FIXTURE_SERVER = fileURLToPath(
  new URL('../../../mcp/src/fixtures/fixture-server.mjs', import.meta.url),
);
const TOKEN = `tok_${'Q7w3Zp9x'.repeat(4)}`;

let server: HttpTestServer;
beforeAll(async () => {
  server = await startHttpTestServer((request, response) => {
    const id = /^\/items\/(\d+)/.exec(request.url)?.[1];
    if (id === undefined) sendJson(response, 404, { error: 'no such item' });
    else sendJson(response, 200, { id: Number(id), name: `item ${id}` });
  });
});
afterAll(() => server.close());

function agentFile(name: string, lines: string[]): string {
  const path = join(directory, `${name}.yaml`);
  writeFileSync(path, [`name: ${name}`, 'model: simulated:sim-primary', ...lines].join('\n'));
  return path;
}

/** Runs `keel` in this process, with `--json`; resolves with the exit code and the parsed result. */
async function keel(
  args: string[],
  environment: NodeJS.ProcessEnv = {},
): Promise<{ code: number; result: RunJson; printed: string }> {
  const lines: string[] = [];
  const output: Output = {
    out: (line) => lines.push(line),
    error: (line) => lines.push(line),
    colour: false,
  };
  const code = await main(
    [...args, '--json', '--store', join(directory, 'keel.db')],
    { ...environment, NO_COLOR: '1' },
    output,
    directory,
  );
  const printed = lines.join('\n');
  return { code, result: (code === 2 ? {} : JSON.parse(printed)) as RunJson, printed };
}

/** What `keel run --json` prints, as far as these tests read it. */
interface RunJson {
  status: string;
  runId: string;
  pending?: { idempotencyKey: string; toolName: string }[];
  report: { toolCalls: { byTool: Record<string, number> } };
  messages: { role: string; content: string }[];
}

function toolContents(result: RunJson): unknown[] {
  return result.messages
    .filter((message) => message.role === 'tool')
    .map((message) => JSON.parse(message.content));
}

/** Whether a process with this id runs (a zombie does not count). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

describe('a command tool declared in an agent file', () => {
  it('runs its program with the model’s arguments, each one literal argument, no shell', async () => {
    const file = agentFile('shout', [
      'tools:',
      '  - command:',
      '      name: shout',
      '      description: Shouts a text back in capital letters',
      '      input: { type: object, properties: { text: { type: string } }, required: [text] }',
      `      argv: [${JSON.stringify(process.execPath)}, -e, "process.stdout.write(process.argv[1].toUpperCase())", "{text}"]`,
      '      timeoutMs: 10000',
    ]);
    const { code, result } = await keel(['run', file, 'Shout hello; rm -rf / $(id)', '--allow-programs']);
    expect(code).toBe(0);
    expect(result.status).toBe('completed');
    expect(result.report.toolCalls.byTool).toEqual({ shout: 1 });
    expect(toolContents(result)).toEqual([
      { status: 'success', content: { exitCode: 0, stdout: 'SHOUT HELLO; RM -RF / $(ID)', stderr: '' } },
    ]);
  });
});

describe('an HTTP tool declared in an agent file', () => {
  const lines = (allow: boolean) => [
    'tools:',
    '  - http:',
    '      name: get_item',
    '      description: Reads an item of the catalogue by its number',
    '      input: { type: object, properties: { id: { type: integer } }, required: [id] }',
    `      url: "${server.url}/items/{id}"`,
    '      headers: { authorization: { env: CATALOGUE_API_TOKEN, prefix: "Bearer " } }',
    ...(allow ? ['      allow: [127.0.0.1]'] : []),
    'retry: { maxAttempts: 1 }',
  ];
  const host = () => `127.0.0.1:${server.port}`;

  it('calls a server on 127.0.0.1 that allow: lets through, with its secret header from the environment', async () => {
    const file = agentFile('catalogue', lines(true));
    const before = server.requests.length;
    const { code, result, printed } = await keel(
      ['run', file, 'Get item 42', '--allow-key-host', host(), '--allow-host', '127.0.0.1'],
      { CATALOGUE_API_TOKEN: TOKEN },
    );
    expect(code).toBe(0);
    expect(result.status).toBe('completed');
    expect(toolContents(result)).toEqual([
      {
        status: 'success',
        content: { status: 200, contentType: 'application/json', body: { id: 42, name: 'item 42' } },
      },
    ]);
    const received = server.requests.slice(before);
    expect(received.map((request) => request.url)).toEqual(['/items/42']);
    expect(received[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(printed).not.toContain(TOKEN);
  });

  it('refuses 127.0.0.1 without allow: (the SSRF guard), as data the model sees', async () => {
    const file = agentFile('guarded', lines(false));
    const before = server.requests.length;
    const { result } = await keel(['run', file, 'Get item 7', '--allow-key-host', host()], {
      CATALOGUE_API_TOKEN: TOKEN,
    });
    expect(toolContents(result)).toEqual([
      expect.objectContaining({
        status: 'error',
        error: expect.objectContaining({ code: 'tool.permission_denied' }),
      }),
    ]);
    expect(server.requests.length).toBe(before);
  });

  it('refuses to start without the variable a secret header names, at the header', async () => {
    const file = agentFile('unset', lines(true));
    const { code, printed } = await keel([
      'run',
      file,
      'Get item 42',
      '--allow-key-host',
      host(),
      '--allow-host',
      '127.0.0.1',
    ]);
    expect(code).toBe(2);
    expect(printed).toMatch(
      /config\.invalid: .*unset\.yaml:9:33: tools\[0\]\.http\.headers\.authorization needs the environment variable CATALOGUE_API_TOKEN, which is not set/,
    );
  });

  it('will not send the secret header to a host the command line does not name', async () => {
    const file = agentFile('unnamed', lines(true));
    const { code, printed } = await keel(['run', file, 'Get item 42', '--allow-host', '127.0.0.1'], {
      CATALOGUE_API_TOKEN: TOKEN,
    });
    expect(code).toBe(2);
    expect(printed).toMatch(
      /config\.invalid: .*unnamed\.yaml:9:33: tools\[0\]\.http\.headers\.authorization would send the value of CATALOGUE_API_TOKEN to 127\.0\.0\.1:\d+/,
    );
  });
});

describe('an MCP server declared in an agent file', () => {
  const file = () =>
    agentFile('fixture', [
      'tools:',
      '  - mcp:',
      `      command: ${JSON.stringify(process.execPath)}`,
      `      args: [${JSON.stringify(FIXTURE_SERVER)}]`,
      '      include: [pid]',
    ]);

  it('starts at the agent’s first step, not before', async () => {
    const built = await buildAgent({
      agentFile: file(),
      workingDirectory: directory,
      environment: {},
      store: new MemoryRunStore(),
      trust: { allowPrograms: true },
    });
    try {
      const [toolset] = built.tools.toolsets;
      expect(toolset?.state).toBe('idle');
      expect(toolset?.pid).toBeUndefined();
    } finally {
      await built.close();
    }
  });

  it('asks for approval of a destructive tool, and keel resume --approve runs it on a new server', async () => {
    const path = agentFile('approving', [
      'tools:',
      '  - mcp:',
      `      command: ${JSON.stringify(process.execPath)}`,
      `      args: [${JSON.stringify(FIXTURE_SERVER)}]`,
      '      include: [add_tool]',
      '      destructiveNeedsApproval: true',
    ]);
    const started = await keel(['run', path, 'Add the extra one', '--allow-programs']);
    expect(started.code).toBe(3);
    expect(started.result.status).toBe('interrupted');
    const [pending] = started.result.pending ?? [];
    expect(pending?.toolName).toBe('add_tool');
    const resumed = await keel(['resume', started.result.runId, '--approve', pending!.idempotencyKey]);
    expect(resumed.code).toBe(0);
    expect(toolContents(resumed.result)).toEqual([{ status: 'success', content: 'added' }]);
  });

  it('in keel chat too: called in a turn, gone when the chat ends (checked by pid)', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let printed = '';
    output.on('data', (chunk: Buffer) => {
      printed += chunk.toString('utf8');
    });
    input.end('What is the server process id?\n');
    const lines: string[] = [];
    const code = await chatCommand(
      [file(), '--json', '--store', join(directory, 'chat.db'), '--session', 'mcp-chat', '--allow-programs'],
      {
        environment: { NO_COLOR: '1' },
        output: { out: (line) => lines.push(line), error: (line) => lines.push(line), colour: false },
        workingDirectory: directory,
        signal: new AbortController().signal,
        streams: { input, output },
      },
    );
    expect(code).toBe(0);
    const pid = Number(/pid returned \\?"(\d+)/.exec(printed)?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(isAlive(pid)).toBe(false);
  });

  it('is called in the run and gone when the command ends (checked by pid)', async () => {
    const { code, result } = await keel([
      'run',
      file(),
      'What is the server process id?',
      '--allow-programs',
    ]);
    expect(code).toBe(0);
    expect(result.report.toolCalls.byTool).toEqual({ pid: 1 });
    const [answer] = toolContents(result) as { status: string; content: string }[];
    expect(answer?.status).toBe('success');
    const pid = Number(answer?.content);
    expect(pid).toBeGreaterThan(0);
    expect(pid).not.toBe(process.pid);
    expect(isAlive(pid)).toBe(false);
  });
});
