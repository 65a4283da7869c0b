// Extended thinking over the Messages API wire: asked for, read (whole and streamed), kept in the conversation and in
// stored run state, and sent back unmodified, first in its turn, when tools are used.
import { agent, KeelError, MemoryRunStore, type Message, type ModelRequest, tool } from '@keel/core';
import {
  type HttpTestServer,
  type ServerSentEvent,
  sendJson,
  startHttpTestServer,
  startSse,
  writeSse,
} from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { anthropic } from './index.js';

let server: HttpTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const THINKING = { type: 'thinking', thinking: 'The user wants x. Look it up.', signature: 'sig-AAA' };
const REDACTED = { type: 'redacted_thinking', data: 'EnCrYpTeD==' };

function message(content: unknown[], stopReason = 'end_turn') {
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-think',
    content,
    stop_reason: stopReason,
    usage: { input_tokens: 20, output_tokens: 150 },
  };
}

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { messages: [{ role: 'user', content: 'Hi' }], signal: new AbortController().signal, ...overrides };
}

async function serve(...bodies: unknown[]) {
  server = await startHttpTestServer((recorded, response) =>
    sendJson(response, 200, bodies[Math.min(recorded.index, bodies.length) - 1]),
  );
  return server;
}

function thrownBy(make: () => unknown): KeelError {
  try {
    make();
  } catch (error) {
    if (KeelError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a throw');
}

const lookupOptions = {
  name: 'lookup',
  description: 'Looks up a value',
  input: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  execute: () => 'x is 1',
} as const;

describe('anthropic extended thinking', () => {
  it('asks for thinking and returns thinking and redacted blocks, in order, as reasoning; no separate token count', async () => {
    const { url, requests } = await serve(message([THINKING, REDACTED, { type: 'text', text: 'x is 1' }]));
    const model = anthropic('claude-think', {
      apiKey: 'k',
      baseUrl: url,
      maxOutputTokens: 8000,
      thinking: { budgetTokens: 2048 },
    });
    const response = await model.generate(request());
    expect(requests[0]!.json()).toMatchObject({
      max_tokens: 8000,
      thinking: { type: 'enabled', budget_tokens: 2048 },
    });
    expect(response.content).toBe('x is 1');
    expect(response.reasoning).toEqual([
      { type: 'thinking', text: THINKING.thinking, signature: 'sig-AAA' },
      { type: 'redacted_thinking', data: 'EnCrYpTeD==' },
    ]);
    // Thinking tokens are inside output_tokens: the API gives no separate count, and keel invents none.
    expect(response.usage).toEqual({ inputTokens: 20, outputTokens: 150 });
  });

  it('sends thinking blocks back unmodified, first in their turn, and leaves out unsigned reasoning', async () => {
    const { url, requests } = await serve(message([{ type: 'text', text: 'done' }]));
    const model = anthropic('claude-think', { apiKey: 'k', baseUrl: url, thinking: { budgetTokens: 1024 } });
    const conversation: Message[] = [
      { role: 'user', content: 'Find x' },
      {
        role: 'assistant',
        content: 'Looking.',
        toolCalls: [{ id: 'toolu_1', name: 'lookup', arguments: '{"q":"x"}' }],
        reasoning: [
          { type: 'thinking', text: 'from another provider' },
          { type: 'thinking', text: THINKING.thinking, signature: 'sig-AAA' },
          { type: 'redacted_thinking', data: 'EnCrYpTeD==' },
        ],
      },
      { role: 'tool', toolCallId: 'toolu_1', toolName: 'lookup', content: 'x is 1' },
    ];
    await model.generate(request({ messages: conversation }));
    expect((requests[0]!.json() as { messages: unknown[] }).messages[1]).toEqual({
      role: 'assistant',
      content: [
        THINKING,
        REDACTED,
        { type: 'text', text: 'Looking.' },
        { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'x' } },
      ],
    });

    // With thinking off, the API needs no thinking back: none is sent.
    const plain = anthropic('claude-plain', { apiKey: 'k', baseUrl: url });
    await plain.generate(request({ messages: conversation }));
    expect(requests[1]!.body).not.toMatch(/thinking/);
  });

  it('reads streamed thinking (thinking_delta, signature_delta) and redacted thinking; only text is delivered', async () => {
    const event = (type: string, data: Record<string, unknown> = {}): ServerSentEvent => ({
      event: type,
      data: { type, ...data },
    });
    server = await startHttpTestServer((_request, response) => {
      startSse(response);
      writeSse(response, [
        event('message_start', {
          message: { model: 'claude-think', content: [], usage: { input_tokens: 9, output_tokens: 1 } },
        }),
        event('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }),
        event('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Let me ' } }),
        event('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'think.' } }),
        event('content_block_delta', {
          index: 0,
          delta: { type: 'signature_delta', signature: 'sig-STREAM' },
        }),
        event('content_block_stop', { index: 0 }),
        event('content_block_start', { index: 1, content_block: REDACTED }),
        event('content_block_stop', { index: 1 }),
        event('content_block_start', { index: 2, content_block: { type: 'text', text: '' } }),
        event('content_block_delta', { index: 2, delta: { type: 'text_delta', text: 'Answer' } }),
        event('content_block_stop', { index: 2 }),
        event('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 80 } }),
        event('message_stop'),
      ]);
      response.end();
    });
    const model = anthropic('claude-think', {
      apiKey: 'k',
      baseUrl: server.url,
      thinking: { budgetTokens: 1024 },
    });
    const deltas: string[] = [];
    const response = await model.generate(request({ onTextDelta: (delta) => deltas.push(delta) }));
    expect(deltas).toEqual(['Answer']);
    expect(response.content).toBe('Answer');
    expect(response.reasoning).toEqual([
      { type: 'thinking', text: 'Let me think.', signature: 'sig-STREAM' },
      { type: 'redacted_thinking', data: 'EnCrYpTeD==' },
    ]);
    expect(response.usage).toEqual({ inputTokens: 9, outputTokens: 80 });
  });

  it('checks the budget against max_tokens when the provider is made, unless thinking is interleaved', () => {
    const small = thrownBy(() => anthropic('m', { apiKey: 'k', thinking: { budgetTokens: 512 } }));
    expect(small.code).toBe('config.invalid');
    expect(small.message).toBe(
      "anthropic(): thinking.budgetTokens must be an integer of at least 1024 (the API's minimum), got 512",
    );
    const large = thrownBy(() => anthropic('m', { apiKey: 'k', thinking: { budgetTokens: 4096 } }));
    expect(large.message).toBe(
      'anthropic(): thinking.budgetTokens (4096) must be below max_tokens (4096), which counts thinking and answer ' +
        'together: raise maxOutputTokens or lower thinking.budgetTokens',
    );
    expect(
      thrownBy(() => anthropic('m', { apiKey: 'k', thinking: { budgetToken: 2048 } as never })).message,
    ).toMatch(
      /Unknown anthropic\(\) thinking option budgetToken \(known: budgetTokens\); did you mean budgetTokens\?/,
    );
    expect(thrownBy(() => anthropic('m', { apiKey: 'k', thinking: 2048 as never })).message).toMatch(
      /thinking must be an object such as \{ budgetTokens: 2048 \}/,
    );
    // Interleaved thinking (beta) lets the budget exceed max_tokens.
    expect(() =>
      anthropic('m', {
        apiKey: 'k',
        headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' },
        thinking: { budgetTokens: 16_000 },
      }),
    ).not.toThrow();
  });

  it('refuses, before sending anything, a request the API would refuse with thinking on', async () => {
    const { url, requests } = await serve(message([{ type: 'text', text: 'ok' }]));
    const model = anthropic('m', { apiKey: 'k', baseUrl: url, thinking: { budgetTokens: 2048 } });
    const refused = async (overrides: Partial<ModelRequest>) => {
      const error = await model.generate(request(overrides)).catch((thrown: unknown) => thrown);
      expect(KeelError.isInstance(error) && error.code).toBe('config.invalid');
      return (error as KeelError).message;
    };
    expect(await refused({ maxOutputTokens: 2048 })).toMatch(
      /budgetTokens \(2048\) must be below max_tokens \(2048\).*raise the request's maxOutputTokens/,
    );
    const tools = [{ name: 'lookup', description: 'd', inputSchema: { type: 'object' } }];
    expect(await refused({ tools, toolChoice: 'required' })).toMatch(/tool choice "auto" or "none" only/);
    expect(await refused({ tools, toolChoice: { name: 'lookup' } })).toMatch(/tool choice "auto" or "none"/);
    expect(await refused({ temperature: 0.2 })).toMatch(/no temperature but 1, got 0.2/);
    expect(requests).toHaveLength(0);
  });

  it('offers the structured-output tool without forcing it when thinking is on', async () => {
    const { url, requests } = await serve(
      message([THINKING, { type: 'tool_use', id: 'toolu_o', name: 'answer', input: { x: 1 } }], 'tool_use'),
    );
    const model = anthropic('m', { apiKey: 'k', baseUrl: url, thinking: { budgetTokens: 1024 } });
    const response = await model.generate(
      request({
        outputSchema: { name: 'answer', schema: { type: 'object', properties: { x: { type: 'number' } } } },
      }),
    );
    const body = requests[0]!.json() as Record<string, unknown>;
    expect(body).not.toHaveProperty('tool_choice');
    expect(body.tools).toMatchObject([{ name: 'answer' }]);
    expect([response.content, response.finishReason]).toEqual(['{"x":1}', 'stop']);
  });

  it('a run keeps the thinking of a tool-use turn through a stored checkpoint and sends it back after resuming', async () => {
    const { url, requests } = await serve(
      message([THINKING, { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'x' } }], 'tool_use'),
      message([
        { type: 'thinking', thinking: 'Now answer.', signature: 'sig-BBB' },
        { type: 'text', text: 'x is 1' },
      ]),
    );
    const store = new MemoryRunStore();
    const make = () =>
      agent({
        model: anthropic('claude-think', { apiKey: 'k', baseUrl: url, thinking: { budgetTokens: 1024 } }),
        tools: [tool({ ...lookupOptions, needsApproval: true })],
        store,
      });
    const first = await make().run('Find x', { runId: 'think-1' });
    expect(first.status).toBe('interrupted');
    const stored = await store.loadRun('think-1');
    expect(JSON.stringify(stored?.state)).toContain('sig-AAA');

    // Another agent (another process, as far as the run can tell) resumes from the store.
    const resumed = await make().resume('think-1', { approvals: { 'think-1:1:0': { approved: true } } });
    expect(resumed.status).toBe('completed');
    expect(resumed.output).toBe('x is 1');
    const second = requests[1]!.json() as { messages: { role: string; content: unknown }[] };
    expect(second.messages.map((turn) => turn.role)).toEqual(['user', 'assistant', 'user']);
    expect(second.messages[1]!.content).toEqual([
      THINKING,
      { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'x' } },
    ]);
    expect(resumed.messages.at(-1)).toEqual({
      role: 'assistant',
      content: 'x is 1',
      reasoning: [{ type: 'thinking', text: 'Now answer.', signature: 'sig-BBB' }],
    });
  });
});
