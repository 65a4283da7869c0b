// The reference server `@modelcontextprotocol/server-everything`, run over stdio by the test: its tools as keel tools,
// calls that succeed, fail as data, report progress; annotations; the environment it is given.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVERYTHING_SERVER, isAlive, keelErrorOf, toolContext } from './fixtures/servers.js';
import type { McpTool } from './mcp-tool.js';
import type { McpProgressEvent } from './options.js';
import { type McpToolset, mcpTools } from './toolset.js';

const progress: McpProgressEvent[] = [];
let everything: McpToolset;
let tools: readonly McpTool[];

function toolNamed(name: string): McpTool {
  const found = tools.find((tool) => tool.name === name);
  if (found === undefined) throw new Error(`no tool ${name} in ${tools.map((tool) => tool.name).join(', ')}`);
  return found;
}

beforeAll(async () => {
  process.env.KEEL_TEST_SECRET = 'sk-parent-secret';
  everything = mcpTools({
    command: process.execPath,
    args: [EVERYTHING_SERVER, 'stdio'],
    env: { GIVEN_TO_SERVER: 'yes' },
    prefix: 'everything',
    timeoutMs: 10_000,
    onProgress: (event) => progress.push(event),
  });
  tools = await everything.connect();
}, 120_000);

afterAll(async () => {
  delete process.env.KEEL_TEST_SECRET;
  await everything.close();
});

describe('mcpTools over stdio, against server-everything', () => {
  it('offers the listed tools with prefix, description, input schema and annotations', () => {
    const echo = toolNamed('everything_echo');
    expect(echo.description).toBe('Echoes back the input string');
    expect(echo.inputSchema).toMatchObject({
      type: 'object',
      properties: { message: { type: 'string' } },
      required: ['message'],
    });
    expect(echo.inputSchema.$schema).toBeUndefined();
    expect(echo.mcp).toMatchObject({ server: 'everything', definition: { name: 'echo' } });
    // readOnlyHint and idempotentHint: idempotent; toggle-simulated-logging says neither.
    expect(echo.idempotent).toBe(true);
    expect(toolNamed('everything_toggle-simulated-logging').idempotent).toBe(false);
    expect(echo.timeoutMs).toBe(10_000);
    // A tool that can only run as an MCP task cannot be called with tools/call, so it is not offered.
    expect(tools.some((tool) => tool.mcp.definition.name === 'simulate-research-query')).toBe(false);
    expect(everything.state).toBe('connected');
    expect(everything.transport).toBe('stdio');
    expect(isAlive(everything.pid ?? -1)).toBe(true);
  });

  it('echoes and adds', async () => {
    expect(await toolNamed('everything_echo').execute({ message: 'hello' }, toolContext())).toBe(
      'Echo: hello',
    );
    expect(await toolNamed('everything_get-sum').execute({ a: 2, b: 40 }, toolContext())).toBe(
      'The sum of 2 and 40 is 42.',
    );
  });

  it('returns structured content as it is', async () => {
    const output = await toolNamed('everything_get-structured-content').execute(
      { location: 'New York' },
      toolContext(),
    );
    expect(output).toEqual({ temperature: 33, conditions: 'Cloudy', humidity: 82 });
  });

  it('describes binary content instead of pasting base64', async () => {
    const output = await toolNamed('everything_get-tiny-image').execute({}, toolContext());
    expect(output).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'image',
          mimeType: 'image/png',
          note: expect.stringMatching(/bytes/),
        }),
      ]),
    );
    expect(JSON.stringify(output).length).toBeLessThan(1_000);
  });

  it('reports progress of a long-running operation, with the call it belongs to', async () => {
    progress.length = 0;
    const output = await toolNamed('everything_trigger-long-running-operation').execute(
      { duration: 0.3, steps: 3 },
      toolContext(undefined, 4),
    );
    expect(output).toBe('Long running operation completed. Duration: 0.3 seconds, Steps: 3.');
    expect(progress).toEqual(
      [1, 2, 3].map((step) => ({
        server: 'everything',
        toolName: 'everything_trigger-long-running-operation',
        mcpToolName: 'trigger-long-running-operation',
        progress: step,
        total: 3,
        runId: 'run-1',
        step: 1,
        callIndex: 4,
        idempotencyKey: 'run-1:1:4',
      })),
    );
  });

  it('keel validates the input before the server sees it', async () => {
    const result = await toolNamed('everything_get-sum').validate({ a: 'two' });
    expect(result.success).toBe(false);
    if (!result.success) expect(result.issues.map((issue) => issue.path).sort()).toEqual(['$.a', '$.b']);
  });

  it('invalid arguments the server refuses are tool.invalid_input, with its text', async () => {
    const error = await keelErrorOf(toolNamed('everything_get-sum').execute({ a: 'two' }, toolContext()));
    expect(error.code).toBe('tool.invalid_input');
    expect(error.message).toMatch(/^MCP error -32602: Input validation error/);
    expect(error.guidance).toMatch(/Correct the arguments/);
  });

  it('passes the explicit environment and a minimal base, never the parent’s other variables', async () => {
    const output = await toolNamed('everything_get-env').execute({}, toolContext());
    const environment = JSON.parse(String(output)) as Record<string, string>;
    expect(environment.GIVEN_TO_SERVER).toBe('yes');
    expect(environment.PATH).toBe(process.env.PATH);
    expect(environment.KEEL_TEST_SECRET).toBeUndefined();
    expect(
      Object.keys(environment).every((key) =>
        ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'GIVEN_TO_SERVER'].includes(key),
      ),
    ).toBe(true);
  });
});
