// Prompt caching on the Messages wire: breakpoints on the stable prefix, cached tokens in usage and in the run's
// report, and a resumed run whose request prefix is byte for byte the first attempt's.

import { agent, MemoryRunStore, type Message, type ModelRequest, tool } from '@keel/core';
import { type HttpTestServer, sendJson, startHttpTestServer } from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { anthropic } from './index.js';

let server: HttpTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Body = {
  system?: unknown;
  tools?: Record<string, unknown>[];
  messages: { role: string; content: unknown }[];
};

function answer(content: unknown[], usage: Record<string, number>, stopReason = 'end_turn') {
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-test-2025',
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5, ...usage },
  };
}

async function serve(replies: unknown[], promptCaching?: boolean) {
  server = await startHttpTestServer((request, response) =>
    sendJson(response, 200, replies[Math.min(request.index, replies.length) - 1]),
  );
  const options = {
    apiKey: 'sk-ant-test',
    baseUrl: server.url,
    ...(promptCaching === undefined ? {} : { promptCaching }),
  };
  return { server, model: anthropic('claude-test', options) };
}

const conversation: Message[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Weather in Paris?' },
  {
    role: 'assistant',
    content: '',
    toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
  },
  { role: 'tool', toolCallId: 'toolu_1', toolName: 'get_weather', content: '{"temp":21}' },
  { role: 'assistant', content: 'Sunny, 21.' },
  { role: 'user', content: 'And Rome?' },
];
const tools = [
  { name: 'get_time', description: 'Time', inputSchema: { type: 'object' } },
  { name: 'get_weather', description: 'Weather', inputSchema: { type: 'object' } },
];

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { messages: conversation, tools, signal: new AbortController().signal, ...overrides };
}

const ephemeral = { type: 'ephemeral' };

function breakpoints(body: Body): string[] {
  const found: string[] = [];
  const blocks = (content: unknown) => (Array.isArray(content) ? (content as Record<string, unknown>[]) : []);
  for (const [index, entry] of (body.tools ?? []).entries())
    if (entry.cache_control) found.push(`tools[${index}]`);
  for (const [index, entry] of blocks(body.system).entries())
    if (entry.cache_control) found.push(`system[${index}]`);
  for (const [turn, message] of body.messages.entries()) {
    for (const [index, entry] of blocks(message.content).entries()) {
      if (entry.cache_control) found.push(`messages[${turn}].content[${index}]`);
    }
  }
  return found;
}

describe('anthropic prompt caching', () => {
  it('marks the tools, the system prompt and the last two user turns, four breakpoints at most', async () => {
    const { server, model } = await serve([answer([{ type: 'text', text: 'Cloudy.' }], {})]);
    await model.generate(request());
    const body = server.requests[0]!.json() as Body;
    expect(breakpoints(body)).toEqual([
      'tools[1]',
      'system[0]',
      'messages[2].content[0]',
      'messages[4].content[0]',
    ]);
    expect(body.system).toEqual([{ type: 'text', text: 'You are terse.', cache_control: ephemeral }]);
    // The tool result turn keeps its block, with the breakpoint beside it; the last turn becomes a block too.
    expect(body.messages[2]!.content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_1', content: '{"temp":21}', cache_control: ephemeral },
    ]);
    expect(body.messages[4]!.content).toEqual([
      { type: 'text', text: 'And Rome?', cache_control: ephemeral },
    ]);
    expect(body.tools![0]).not.toHaveProperty('cache_control');
  });

  it('sends no breakpoint with promptCaching: false, and the body is then the plain one', async () => {
    const { server, model } = await serve([answer([{ type: 'text', text: 'Cloudy.' }], {})], false);
    await model.generate(request());
    const body = server.requests[0]!.json() as Body;
    expect(breakpoints(body)).toEqual([]);
    expect(body.system).toBe('You are terse.');
    expect(body.messages[4]!.content).toBe('And Rome?');
  });

  it('with neither tools nor a system prompt, marks the only user turn', async () => {
    const { server, model } = await serve([answer([{ type: 'text', text: 'Hi.' }], {})]);
    await model.generate(request({ messages: [{ role: 'user', content: 'Hi' }], tools: undefined }));
    expect(breakpoints(server.requests[0]!.json() as Body)).toEqual(['messages[0].content[0]']);
  });

  it('reads cached and written tokens into usage, and the run report sums them with the hit rate', async () => {
    const { model } = await serve([
      answer(
        [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { word: 'keel' } }],
        {
          cache_creation_input_tokens: 1_000,
          cache_read_input_tokens: 0,
        },
        'tool_use',
      ),
      answer([{ type: 'text', text: 'A ship part.' }], {
        cache_creation_input_tokens: 30,
        cache_read_input_tokens: 1_000,
      }),
    ]);
    const lookup = tool({
      name: 'lookup',
      description: 'Looks a word up',
      input: { type: 'object', properties: { word: { type: 'string' } } },
      idempotent: true,
      execute: () => 'the spine of a ship',
    });
    const result = await agent({ model, tools: [lookup], instructions: 'Be terse.' }).run('Define keel');
    expect(result.status).toBe('completed');
    expect(result.usage).toEqual({
      inputTokens: 10 + 1_000 + 10 + 30 + 1_000,
      outputTokens: 10,
      cachedInputTokens: 1_000,
      cacheWriteInputTokens: 1_030,
    });
    expect(result.report.promptCacheHitRate).toBeCloseTo(1_000 / 2_050, 10);
  });

  it("a resumed run's request repeats the first attempt's prefix (tools, system, earlier turns) byte for byte", async () => {
    const { server, model } = await serve([
      answer([{ type: 'tool_use', id: 'toolu_1', name: 'send_mail', input: { to: 'ana' } }], {}, 'tool_use'),
      answer([{ type: 'text', text: 'Sent.' }], { cache_read_input_tokens: 900 }),
    ]);
    const store = new MemoryRunStore();
    const make = () =>
      agent({
        model,
        store,
        instructions: 'You send mail.',
        tools: [
          tool({
            name: 'send_mail',
            description: 'Sends a mail',
            input: { type: 'object', properties: { to: { type: 'string' } } },
            needsApproval: true,
            execute: () => 'sent',
          }),
        ],
      });
    const first = await make().run('Mail Ana', { runId: 'cache-resume' });
    expect(first.status).toBe('interrupted');
    // Another agent, as in another process: the conversation comes back from the store.
    const key = first.pending![0]!.idempotencyKey;
    const resumed = await make().resume('cache-resume', { approvals: { [key]: { approved: true } } });
    expect(resumed.status).toBe('completed');
    expect(server.requests).toHaveLength(2);
    const [before, after] = server.requests.map((recorded) => recorded.json() as Body);
    const raw = (value: unknown) => JSON.stringify(value);
    expect(raw(after!.tools)).toBe(raw(before!.tools));
    expect(raw(after!.system)).toBe(raw(before!.system));
    expect(raw(after!.messages[0])).toBe(raw(before!.messages[0]));
    expect(server.requests[1]!.body).toContain(raw(before!.messages[0]));
    expect(resumed.report.promptCacheHitRate).toBeGreaterThan(0);
  });
});
