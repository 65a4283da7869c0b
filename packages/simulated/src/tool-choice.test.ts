// toolChoice from the agent to the simulated server's wire (`tool_choice`) and the brain that obeys it.

import { agent, tool } from '@keel/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { BrainRequest } from './brain.js';
import { defaultBrain } from './default-brain.js';
import { simulated } from './provider.js';

const seen: BrainRequest['toolChoice'][] = [];
const model = simulated({
  brain: (request) => {
    seen.push(request.toolChoice);
    return defaultBrain(request);
  },
});
afterEach(async () => {
  seen.length = 0;
  await model.close();
});

const weather = tool({
  name: 'get_weather',
  description: 'Current weather for a city',
  input: { type: 'object', properties: { city: { type: 'string' } } },
  idempotent: true,
  execute: () => ({ temperatureC: 21 }),
});
const clock = tool({
  name: 'get_time',
  description: 'The time of day',
  input: { type: 'object', properties: {} },
  idempotent: true,
  execute: () => ({ time: '12:00' }),
});

describe('toolChoice over the simulated wire', () => {
  it('reaches the server as tool_choice, and the model calls the named tool', async () => {
    const result = await agent({ model, tools: [weather, clock], toolChoice: { name: 'get_time' } }).run(
      'What is the weather in Paris?',
    );
    expect(result.status).toBe('completed');
    expect(seen).toEqual([{ name: 'get_time' }, 'auto']);
    const calls = result.messages.flatMap((message) =>
      message.role === 'assistant' ? (message.toolCalls ?? []).map((call) => call.name) : [],
    );
    expect(calls).toEqual(['get_time']);
  });

  it("none keeps the model from calling a tool the task's words would pick", async () => {
    const result = await agent({ model, tools: [weather] }).run('What is the weather in Paris?', {
      toolChoice: 'none',
    });
    expect(seen).toEqual(['none']);
    expect(result.messages.some((message) => message.role === 'tool')).toBe(false);
  });
});
