// agent.stream() on the simulated provider (keel's OpenAI-compatible client and the simulated server on 127.0.0.1):
// the tool call streams as parts, and the text parts join to the output.
import { agent, type StreamPart, tool } from '@keel/core';
import type { ModelStreamPart } from '@keel/core/adapter';
import { afterEach, describe, expect, it } from 'vitest';
import { type SimulatedProvider, simulated } from './index.js';

let model: SimulatedProvider | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

const weather = tool({
  name: 'get_weather',
  description: 'Current weather for a city',
  input: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  execute: ({ city }: { city: string }) => ({ city, temperatureC: 21 }),
});

describe('simulated provider under agent.stream()', () => {
  it('gives each tool call’s start, argument pieces and end to onStreamPart', async () => {
    model = simulated();
    const parts: ModelStreamPart[] = [];
    const response = await model.generate({
      messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
      tools: [{ name: 'get_weather', description: 'weather', inputSchema: weather.inputSchema }],
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
    expect(parts.at(-1)).toMatchObject({ type: 'tool-call-end', index: 0, arguments: call.arguments });
  });

  it('streams tool-call parts, the tool result, then text equal to the output', async () => {
    model = simulated();
    const stream = agent({ model, tools: [weather] }).stream('What is the weather in Paris?');
    const parts: StreamPart[] = [];
    for await (const part of stream) parts.push(part);
    const result = await stream.result;

    expect(result.status).toBe('completed');
    const types = parts.map((part) => part.type);
    expect(types).toContain('tool-call-start');
    expect(types.indexOf('tool-call-end')).toBeLessThan(types.indexOf('tool-result'));
    const lastStep = parts.filter((part) => part.type === 'step-start').at(-1)!.step;
    const text = parts
      .flatMap((part) => (part.type === 'text-delta' && part.step === lastStep ? [part.delta] : []))
      .join('');
    expect(text).toBe(result.output);
    expect(parts.filter((part) => part.type === 'text-delta').length).toBeGreaterThan(1);
  });
});
