// agent.stream() on an AI SDK model: @ai-sdk/openai speaking to the simulated OpenAI-compatible server on
// 127.0.0.1. The bridge hands the AI SDK's tool-input parts on as keel's tool-call parts.
import { agent, type StreamPart } from '@keel/core';
import type { ModelStreamPart } from '@keel/core/adapter';
import { afterEach, describe, expect, it } from 'vitest';
import { fromAiSdk } from './index.js';
import { chatModel, serverPool, weatherTool } from './test-support/simulated.js';

const servers = serverPool();
afterEach(servers.closeAll);

describe('fromAiSdk under agent.stream()', () => {
  it('gives the AI SDK’s tool-input parts to onStreamPart as tool-call start, deltas and end', async () => {
    const server = await servers.start();
    const parts: ModelStreamPart[] = [];
    const response = await fromAiSdk(chatModel(server)).generate({
      messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
      tools: [{ name: 'get_weather', description: 'weather', inputSchema: weatherTool.inputSchema }],
      signal: new AbortController().signal,
      onTextDelta: () => undefined,
      onStreamPart: (part) => parts.push(part),
    });
    const call = response.toolCalls[0]!;
    expect(parts[0]).toEqual({
      type: 'tool-call-start',
      index: 0,
      toolCallId: call.id,
      toolName: 'get_weather',
    });
    expect(parts.at(-1)).toEqual({
      type: 'tool-call-end',
      index: 0,
      toolCallId: call.id,
      toolName: 'get_weather',
      arguments: call.arguments,
    });
    const deltas = parts.flatMap((part) => (part.type === 'tool-call-delta' ? [part.delta] : []));
    expect(deltas.join('')).toBe(call.arguments);
  });

  it('streams the tool call as the model writes it, its result, and text equal to the output', async () => {
    const server = await servers.start();
    const stream = agent({ model: fromAiSdk(chatModel(server)), tools: [weatherTool] }).stream(
      'What is the weather in Paris?',
    );
    const parts: StreamPart[] = [];
    for await (const part of stream) parts.push(part);
    const result = await stream.result;

    expect(result.status).toBe('completed');
    const types = parts.map((part) => part.type);
    const start = types.indexOf('tool-call-start');
    const end = types.indexOf('tool-call-end');
    expect(start).toBeGreaterThan(0);
    expect(types.slice(start + 1, end).every((type) => type === 'tool-call-delta')).toBe(true);
    expect(types.filter((type) => type === 'tool-call-start')).toHaveLength(1);
    expect(types.filter((type) => type === 'tool-call-end')).toHaveLength(1);
    expect(types.indexOf('tool-result')).toBeGreaterThan(end);
    const call = parts[end] as Extract<StreamPart, { type: 'tool-call-end' }>;
    const pieces = parts
      .slice(start + 1, end)
      .map((part) => (part as Extract<StreamPart, { type: 'tool-call-delta' }>).delta)
      .join('');
    expect(pieces).toBe(call.arguments);
    expect(JSON.parse(call.arguments)).toEqual({ city: 'Paris' });
    const lastStep = parts.filter((part) => part.type === 'step-start').at(-1)!.step;
    const text = parts
      .flatMap((part) => (part.type === 'text-delta' && part.step === lastStep ? [part.delta] : []))
      .join('');
    expect(text).toBe(result.output);
    expect(types.at(-1)).toBe('finish');
  });
});
