// The AI SDK UI message stream of a keel agent, read as useChat reads it: a real node:http server on 127.0.0.1
// serves toUIMessageStreamResponse(agent.stream(...)); the AI SDK's own chat transport fetches and parses it, and
// readUIMessageStream builds the assistant message from the chunks.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { agent, KeelError, MemoryRunStore, type RunResult, tool } from '@keel/core';
import { type ScriptedStep, scriptedModel } from '@keel/core/testing';
import { DefaultChatTransport, readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { toUIMessageStreamResponse, type UIMessageStreamChunk } from './index.js';

// Every chunk keel writes is one the AI SDK declares.
const chunkFitsTheAiSdk = (chunk: UIMessageStreamChunk): UIMessageChunk => chunk;
void chunkFitsTheAiSdk;

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  if (server !== undefined) await new Promise((resolve) => server!.close(resolve));
  server = undefined;
});

const weather = (runs: string[], needsApproval = false) =>
  tool({
    name: 'get_weather',
    description: 'Current weather for a city',
    input: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    needsApproval,
    execute: ({ city }: { city: string }) => {
      runs.push(city);
      return { city, sky: 'sunny' };
    },
  });

/** Serves each POST with the agent's stream of the last user message's text; resolves the results as they end. */
async function serveAgent(
  model: ReturnType<typeof scriptedModel>,
  runs: string[],
  options: { needsApproval?: boolean } = {},
) {
  const store = new MemoryRunStore();
  const assistant = agent({ model, tools: [weather(runs, options.needsApproval)], store });
  const results: Promise<RunResult>[] = [];
  server = createServer(async (request, response) => {
    let body = '';
    for await (const piece of request) body += piece;
    const { messages } = JSON.parse(body) as { messages: UIMessage[] };
    const last = messages.at(-1)!;
    const text = last.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
    const stream = assistant.stream(text);
    results.push(stream.result);
    const web = toUIMessageStreamResponse(stream, { headers: { 'x-keel-run': stream.runId } });
    response.writeHead(web.status, Object.fromEntries(web.headers));
    const reader = web.body!.getReader();
    response.on('close', () => {
      if (!response.writableFinished) void reader.cancel();
    });
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true as const }));
      if (done) break;
      response.write(value);
    }
    response.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/api/chat`, results, assistant };
}

async function chat(url: string, text: string, abortSignal?: AbortSignal) {
  const transport = new DefaultChatTransport<UIMessage>({ api: url });
  const chunks = await transport.sendMessages({
    trigger: 'submit-message',
    chatId: 'chat-1',
    messageId: undefined,
    messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text }] }],
    abortSignal,
  });
  let message: UIMessage | undefined;
  for await (const snapshot of readUIMessageStream({ stream: chunks })) message = snapshot;
  return message!;
}

const TOOL_THEN_TEXT: ScriptedStep[] = [
  { toolCalls: [{ id: 'call-1', name: 'get_weather', arguments: { city: 'Paris' } }] },
  { content: 'Sunny in Paris.', textDeltas: ['Sunny', ' in', ' Paris.'] },
];

describe('toUIMessageStreamResponse, read by the AI SDK chat transport', () => {
  it('gives the text, the tool call with its output, the steps and the finish with the run’s metadata', async () => {
    const runs: string[] = [];
    const { url, results } = await serveAgent(scriptedModel(TOOL_THEN_TEXT), runs);

    const message = await chat(url, 'Weather in Paris?');
    const result = await results[0]!;

    expect(result.status).toBe('completed');
    expect(runs).toEqual(['Paris']);
    expect(message.role).toBe('assistant');
    expect(message.id).toBe(result.runId);
    expect(message.parts.map((part) => part.type)).toEqual([
      'step-start',
      'tool-get_weather',
      'step-start',
      'text',
    ]);
    expect(message.parts[1]).toMatchObject({
      type: 'tool-get_weather',
      toolCallId: 'call-1',
      state: 'output-available',
      input: { city: 'Paris' },
      output: { city: 'Paris', sky: 'sunny' },
    });
    expect(message.parts[3]).toMatchObject({ type: 'text', text: 'Sunny in Paris.', state: 'done' });
    expect(message.metadata).toEqual({
      runId: result.runId,
      status: 'completed',
      stopReason: 'final_answer',
    });
  });

  it('ends in error a call the step did not run (invalid arguments), so the client never waits on it', async () => {
    const runs: string[] = [];
    const { url, results } = await serveAgent(
      scriptedModel([
        { toolCalls: [{ id: 'bad', name: 'get_weather', arguments: { town: 'Paris' } }] },
        ...TOOL_THEN_TEXT,
      ]),
      runs,
    );

    const message = await chat(url, 'Weather in Paris?');

    expect((await results[0]!).status).toBe('completed');
    expect(runs).toEqual(['Paris']);
    const tools = message.parts.filter((part) => part.type === 'tool-get_weather');
    expect(tools).toMatchObject([
      { toolCallId: 'bad', state: 'output-error' },
      { toolCallId: 'call-1', state: 'output-available' },
    ]);
  });

  it('asks for approval with the call’s idempotency key, which agent.resume() takes', async () => {
    const runs: string[] = [];
    const { url, results, assistant } = await serveAgent(scriptedModel(TOOL_THEN_TEXT), runs, {
      needsApproval: true,
    });

    const message = await chat(url, 'Weather in Paris?');
    const result = await results[0]!;

    expect(result.status).toBe('interrupted');
    const toolPart = message.parts.find((part) => part.type === 'tool-get_weather');
    expect(toolPart).toMatchObject({ state: 'approval-requested', toolCallId: 'call-1' });
    const approvalId = (toolPart as { approval: { id: string } }).approval.id;
    expect(approvalId).toBe(result.pending![0]!.idempotencyKey);
    const resumed = await assistant.resume(result.runId, { approvals: { [approvalId]: { approved: true } } });
    expect(resumed.status).toBe('completed');
    expect(runs).toEqual(['Paris']);
  });

  it('reports a failed run as an error chunk the client sees', async () => {
    const { url, results } = await serveAgent(scriptedModel([new KeelError('provider.auth', 'bad key')]), []);
    const errors: string[] = [];
    const transport = new DefaultChatTransport<UIMessage>({ api: url });
    const chunks = await transport.sendMessages({
      trigger: 'submit-message',
      chatId: 'chat-1',
      messageId: undefined,
      messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] }],
      abortSignal: undefined,
    });
    const read: UIMessageChunk[] = [];
    for await (const chunk of chunks) read.push(chunk);
    for (const chunk of read) if (chunk.type === 'error') errors.push(chunk.errorText);

    expect((await results[0]!).status).toBe('failed');
    expect(errors).toEqual([expect.stringMatching(/^provider\.auth: /)]);
    expect(read.at(-1)).toMatchObject({ type: 'finish', finishReason: 'error' });
  });

  it('cancels the run when the client goes away mid-answer', async () => {
    const hanging: ScriptedStep = (request) => {
      request.onTextDelta?.('Here is what I');
      return new Promise((_, reject) =>
        request.signal.addEventListener('abort', () => reject(request.signal.reason), { once: true }),
      );
    };
    const { url, results } = await serveAgent(scriptedModel([hanging]), []);
    const controller = new AbortController();
    const transport = new DefaultChatTransport<UIMessage>({ api: url });
    const chunks = await transport.sendMessages({
      trigger: 'submit-message',
      chatId: 'chat-1',
      messageId: undefined,
      messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] }],
      abortSignal: controller.signal,
    });
    const reader = chunks.getReader();
    for (;;) {
      const { value } = await reader.read();
      if (value?.type === 'text-delta') break;
    }
    controller.abort();
    await reader.cancel().catch(() => undefined);

    const result = await results[0]!;
    expect(result.status).toBe('cancelled');
  });
});
