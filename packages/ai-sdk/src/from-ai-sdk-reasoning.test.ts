// Reasoning through the bridge: Anthropic thinking via @ai-sdk/anthropic against a 127.0.0.1 server speaking the
// Messages API (signatures kept in keel's conversation and sent back first in the turn), and OpenAI reasoning
// tokens via @ai-sdk/openai.
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { agent, MemoryRunStore, tool } from '@keel/core';
import { type HttpTestServer, sendJson, startHttpTestServer } from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { fromAiSdk } from './index.js';

let server: HttpTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const THINKING = { type: 'thinking', thinking: 'Look x up first.', signature: 'sig-AAA' };
const REDACTED = { type: 'redacted_thinking', data: 'EnCrYpTeD==' };

function message(content: unknown[], stopReason: string) {
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-think',
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: 20, output_tokens: 90 },
  };
}

const lookupOptions = {
  name: 'lookup',
  description: 'Looks up a value',
  input: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  execute: () => 'x is 1',
} as const;

function anthropicModel(url: string) {
  return fromAiSdk(createAnthropic({ baseURL: `${url}/v1`, apiKey: 'sk-ant-test' })('claude-think'), {
    providerOptions: { anthropic: { thinking: { type: 'enabled', budgetTokens: 1024 } } },
  });
}

describe('reasoning through the AI SDK bridge', () => {
  it('keeps thinking blocks with their signatures across a stored checkpoint and sends them back first', async () => {
    server = await startHttpTestServer((recorded, response) => {
      const body =
        recorded.index === 1
          ? message(
              [THINKING, REDACTED, { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'x' } }],
              'tool_use',
            )
          : message([{ type: 'text', text: 'x is 1' }], 'end_turn');
      sendJson(response, 200, body);
    });
    const url = server.url;
    const store = new MemoryRunStore();
    const make = () =>
      agent({ model: anthropicModel(url), tools: [tool({ ...lookupOptions, needsApproval: true })], store });
    const first = await make().run('Find x', { runId: 'bridge-think' });
    expect(first.status).toBe('interrupted');
    expect(first.messages[1]).toMatchObject({
      role: 'assistant',
      reasoning: [
        { type: 'thinking', text: 'Look x up first.', signature: 'sig-AAA' },
        { type: 'redacted_thinking', data: 'EnCrYpTeD==' },
      ],
    });
    const resumed = await make().resume('bridge-think', {
      approvals: { 'bridge-think:1:0': { approved: true } },
    });
    expect(resumed.status).toBe('completed');
    const [firstRequest, secondRequest] = server.requests.map(
      (recorded) => recorded.json() as Record<string, unknown> & { messages: { content: unknown }[] },
    );
    expect(firstRequest).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 1024 } });
    expect(secondRequest!.messages[1]!.content).toEqual([
      THINKING,
      REDACTED,
      { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'x' } },
    ]);
  });

  it("sends back thinking kept by keel's own Anthropic provider (signature, no AI SDK metadata)", async () => {
    server = await startHttpTestServer((_recorded, response) =>
      sendJson(response, 200, message([{ type: 'text', text: 'ok' }], 'end_turn')),
    );
    const result = await agent({ model: anthropicModel(server.url) }).run([
      { role: 'user', content: 'Find x' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'toolu_1', name: 'lookup', arguments: '{"q":"x"}' }],
        reasoning: [
          { type: 'thinking', text: 'Look x up first.', signature: 'sig-AAA' },
          { type: 'redacted_thinking', data: 'EnCrYpTeD==' },
        ],
      },
      { role: 'tool', toolCallId: 'toolu_1', toolName: 'lookup', content: 'x is 1' },
    ]);
    expect(result.status).toBe('completed');
    const sent = server.requests[0]!.json() as { messages: { content: unknown }[] };
    expect(sent.messages[1]!.content).toEqual([
      THINKING,
      REDACTED,
      { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'x' } },
    ]);
  });

  it("counts OpenAI's reasoning tokens in usage and the report", async () => {
    server = await startHttpTestServer((_recorded, response) =>
      sendJson(response, 200, {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1,
        model: 'o4-mini',
        choices: [{ index: 0, message: { role: 'assistant', content: '42' }, finish_reason: 'stop' }],
        usage: {
          prompt_tokens: 10,
          completion_tokens: 300,
          total_tokens: 310,
          completion_tokens_details: { reasoning_tokens: 256 },
        },
      }),
    );
    const model = fromAiSdk(createOpenAI({ baseURL: server.url, apiKey: 'sk-test' }).chat('o4-mini'), {
      providerOptions: { openai: { reasoningEffort: 'high' } },
    });
    const result = await agent({ model }).run('Think');
    // The AI SDK's OpenAI provider reports its cache reads as 0 when the API leaves them out.
    expect(result.report.usage).toEqual({
      inputTokens: 10,
      outputTokens: 300,
      reasoningTokens: 256,
      cachedInputTokens: 0,
    });
    expect(server.requests[0]!.json()).toMatchObject({ reasoning_effort: 'high' });
  });

  it("counts the AI SDK's cache reads (inputTokens.cacheRead) in usage and the report's hit rate", async () => {
    server = await startHttpTestServer((_recorded, response) =>
      sendJson(response, 200, {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1,
        model: 'gpt-4.1',
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage: {
          prompt_tokens: 2_000,
          completion_tokens: 5,
          total_tokens: 2_005,
          prompt_tokens_details: { cached_tokens: 1_000 },
        },
      }),
    );
    const model = fromAiSdk(createOpenAI({ baseURL: server.url, apiKey: 'sk-test' }).chat('gpt-4.1'));
    const result = await agent({ model }).run('Hi');
    expect(result.report.usage).toMatchObject({ inputTokens: 2_000, cachedInputTokens: 1_000 });
    expect(result.report.promptCacheHitRate).toBe(0.5);
  });
});
