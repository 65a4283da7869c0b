import type { Message } from '@keel/core';
import type { ToolDefinition } from '@keel/core/adapter';
import { describe, expect, it } from 'vitest';
import type { BrainReply, BrainRequest } from './brain.js';
import { defaultBrain, MAX_CORRECTIONS, relevantTools } from './default-brain.js';

const weather: ToolDefinition = {
  name: 'get_weather',
  description: 'Current weather for a city',
  inputSchema: {
    type: 'object',
    properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
    required: ['city'],
  },
};
const time: ToolDefinition = {
  name: 'getLocalTime',
  description: 'The local time in a city',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const stocks: ToolDefinition = {
  name: 'stock_price',
  description: 'Latest price of a stock ticker',
  inputSchema: {
    type: 'object',
    properties: { ticker: { type: 'string' }, days: { type: 'integer', minimum: 1 } },
    required: ['ticker', 'days'],
  },
};

function request(messages: Message[], overrides: Partial<BrainRequest> = {}): BrainRequest {
  return {
    model: 'sim',
    index: 0,
    messages,
    tools: [weather, time, stocks],
    toolChoice: 'auto',
    body: {},
    ...overrides,
  };
}

async function think(messages: Message[], overrides: Partial<BrainRequest> = {}): Promise<BrainReply> {
  return defaultBrain(request(messages, overrides));
}

const user = (content: string): Message => ({ role: 'user', content });
const called = (id: string, name: string, args: string): Message => ({
  role: 'assistant',
  content: '',
  toolCalls: [{ id, name, arguments: args }],
});
const result = (id: string, toolName: string, content: string, isError = false): Message =>
  isError
    ? { role: 'tool', toolCallId: id, toolName, content, isError }
    : { role: 'tool', toolCallId: id, toolName, content };

describe('defaultBrain', () => {
  it('answers a question about what a folder holds with the listing tools alone, listing "." unless a path is given', async () => {
    const pathInput = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
    const files: ToolDefinition[] = [
      { name: 'read_text_file', description: 'Read the contents of a file', inputSchema: pathInput },
      {
        name: 'list_directory',
        description: 'List the files and directories in a path',
        inputSchema: pathInput,
      },
      { name: 'get_file_info', description: 'Metadata of a file', inputSchema: pathInput },
    ];
    const listed = await think([user('What files are in the examples folder?')], { tools: files });
    expect(listed.toolCalls).toEqual([{ name: 'list_directory', arguments: { path: '.' } }]);
    const spelled = await think([user('Which files are in docs/guides?')], { tools: files });
    expect(spelled.toolCalls).toEqual([{ name: 'list_directory', arguments: { path: 'docs/guides' } }]);
    // Not a question about a folder: every relevant tool, with the file the task names.
    const read = await think([user('Read the file notes.txt')], { tools: files });
    expect(read.toolCalls?.map((call) => call.name)).toEqual([
      'read_text_file',
      'list_directory',
      'get_file_info',
    ]);
    expect(read.toolCalls?.[0]?.arguments).toEqual({ path: 'notes.txt' });
  });

  it('picks tools by keywords of their name and description', () => {
    expect(relevantTools('What is the weather in Paris?', [weather, time, stocks])).toEqual([weather]);
    expect(relevantTools('Weather and local time in Oslo', [weather, time, stocks])).toEqual([weather, time]);
    expect(relevantTools('Tell me a joke', [weather, time, stocks])).toEqual([]);
  });

  it('calls the relevant tool with a capitalised word of the task as the city', async () => {
    expect(await think([user('What is the weather in Paris?')])).toEqual({
      toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }],
    });
  });

  it('calls several matching tools in parallel, and keeps multi-word names together', async () => {
    const reply = await think([user('What are the weather and the time in New York right now?')]);
    expect(reply.toolCalls).toEqual([
      { name: 'get_weather', arguments: { city: 'New York' } },
      { name: 'getLocalTime', arguments: { city: 'New York' } },
    ]);
  });

  it('calls a tool once per entity the task names', async () => {
    const reply = await think([user('What is the weather in Paris and in Oslo?')]);
    expect(reply.toolCalls).toEqual([
      { name: 'get_weather', arguments: { city: 'Paris' } },
      { name: 'get_weather', arguments: { city: 'Oslo' } },
    ]);
  });

  it('fills an optional enum field only when the task names one of its values', async () => {
    const ticket = {
      name: 'create_ticket',
      description: 'Opens a support ticket',
      inputSchema: {
        type: 'object',
        properties: {
          title: { type: 'string' },
          priority: { type: 'string', enum: ['low', 'normal', 'urgent'] },
        },
        required: ['title'],
      },
    };
    const urgent = await defaultBrain({
      ...request([user('Open an urgent ticket: printer on fire')]),
      tools: [ticket],
    });
    expect(urgent.toolCalls?.[0]?.arguments).toMatchObject({ priority: 'urgent' });
    const plain = await defaultBrain({
      ...request([user('Open a ticket: printer on fire')]),
      tools: [ticket],
    });
    expect(plain.toolCalls?.[0]?.arguments).not.toHaveProperty('priority');
  });

  it('fills numbers from the task and honours minimum', async () => {
    const reply = await think([user('Stock price of ACME over the last 0 days')]);
    expect(reply.toolCalls).toEqual([{ name: 'stock_price', arguments: { ticker: 'ACME', days: 1 } }]);
  });

  it('answers directly when no tool matches, when tool_choice is none, and without tools', async () => {
    for (const reply of [
      await think([user('Tell me a joke')]),
      await think([user('Weather in Paris?')], { toolChoice: 'none' }),
      await think([user('Weather in Paris?')], { tools: [] }),
    ]) {
      expect(reply.toolCalls).toBeUndefined();
      expect(reply.content).toMatch(/^This is the simulated model answering ".+" directly, without tools\.$/);
    }
  });

  it('obeys a named tool_choice, and required with no match calls the first tool', async () => {
    const named = await think([user('Tell me a joke')], { toolChoice: { name: 'stock_price' } });
    expect(named.toolCalls?.map((call) => call.name)).toEqual(['stock_price']);
    const required = await think([user('Tell me a joke')], { toolChoice: 'required' });
    expect(required.toolCalls?.map((call) => call.name)).toEqual(['get_weather']);
  });

  it('summarises tool results by quoting them', async () => {
    const reply = await think([
      user('Weather and local time in Paris?'),
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'a', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { id: 'b', name: 'getLocalTime', arguments: '{"city":"Paris"}' },
        ],
      },
      result('a', 'get_weather', '{"status":"success","content":"Sunny, 21°C"}'),
      result('b', 'getLocalTime', '{"status":"success","content":{"hours":14,"minutes":5}}'),
    ]);
    expect(reply).toEqual({
      content:
        'Here is what I found: get_weather returned "Sunny, 21°C"; getLocalTime returned "{"hours":14,"minutes":5}".',
    });
  });

  it('quotes the text of a result that is an object holding one text (an MCP server’s structured content)', async () => {
    const reply = await think([
      user('Weather in Paris?'),
      called('a', 'get_weather', '{"city":"Paris"}'),
      result('a', 'get_weather', '{"status":"success","content":{"content":"Sunny,\\n21°C"}}'),
    ]);
    expect(reply).toEqual({ content: 'Here is what I found: get_weather returned "Sunny, 21°C".' });
  });

  it('fixes an argument the error names, using a value quoted in the guidance', async () => {
    const error = JSON.stringify({
      status: 'error',
      error: { code: 'tool.invalid_input', message: 'city "Weather" is not a known city' },
      guidance: 'Pass a city such as "Lyon".',
    });
    const reply = await think([
      user('Weather for Lyon please'),
      called('a', 'get_weather', '{"city":"Weather"}'),
      result('a', 'get_weather', error, true),
    ]);
    expect(reply.toolCalls).toEqual([{ name: 'get_weather', arguments: { city: 'Lyon' } }]);
  });

  it('adds a missing required argument and fixes a mistyped one', async () => {
    const missing = await think([
      user('Stock price of ACME for 5 days'),
      called('a', 'stock_price', '{"days":5}'),
      result('a', 'stock_price', '{"status":"error","error":{"message":"Required property missing"}}', true),
    ]);
    expect(missing.toolCalls).toEqual([{ name: 'stock_price', arguments: { days: 5, ticker: 'ACME' } }]);
    const mistyped = await think([
      user('Stock price of ACME for 5 days'),
      called('a', 'stock_price', '{"ticker":"ACME","days":"five"}'),
      result('a', 'stock_price', 'Error: $.days: expected integer', true),
    ]);
    expect(mistyped.toolCalls).toEqual([{ name: 'stock_price', arguments: { ticker: 'ACME', days: 5 } }]);
  });

  it('rebuilds arguments that were not valid JSON', async () => {
    const reply = await think([
      user('Weather in Paris?'),
      called('a', 'get_weather', '{"city":"Par'),
      result(
        'a',
        'get_weather',
        '{"status":"error","error":{"message":"arguments are not valid JSON"}}',
        true,
      ),
    ]);
    expect(reply.toolCalls).toEqual([{ name: 'get_weather', arguments: { city: 'Paris' } }]);
    expect(reply.content).toContain('corrected arguments');
  });

  it('replaces a call to an unknown tool by the closest offered tool', async () => {
    const reply = await think([
      user('Weather in Paris?'),
      called('a', 'get_weather_v2', '{"city":"Paris"}'),
      result(
        'a',
        'get_weather_v2',
        '{"status":"error","error":{"code":"tool.not_found","message":"no such tool"}}',
        true,
      ),
    ]);
    expect(reply.toolCalls).toEqual([{ name: 'get_weather', arguments: { city: 'Paris' } }]);
  });

  it('explains instead of retrying when nothing in the error says what to change', async () => {
    const reply = await think([
      user('Weather in Paris?'),
      called('a', 'get_weather', '{"city":"Paris"}'),
      result(
        'a',
        'get_weather',
        '{"status":"error","error":{"message":"upstream weather service is down"}}',
        true,
      ),
    ]);
    expect(reply).toEqual({
      content: 'I could not complete the request: get_weather failed: "upstream weather service is down".',
    });
  });

  it(`gives up after ${MAX_CORRECTIONS} corrections of the same tool`, async () => {
    const failure = (id: string) => result(id, 'get_weather', 'Error: city is invalid, try "Rome"', true);
    const messages: Message[] = [user('Weather in Paris?')];
    for (let attempt = 0; attempt <= MAX_CORRECTIONS; attempt++) {
      const id = `c${attempt}`;
      messages.push(
        called(id, 'get_weather', attempt === 0 ? '{"city":"Paris"}' : '{"city":"Rome"}'),
        failure(id),
      );
      const reply = await think([...messages]);
      if (attempt < MAX_CORRECTIONS) expect(reply.toolCalls, `attempt ${attempt}`).toBeDefined();
      else expect(reply.toolCalls).toBeUndefined();
    }
  });

  it('mentions failures it could not recover from next to the results it has', async () => {
    const reply = await think([
      user('Weather and local time in Paris?'),
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'a', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { id: 'b', name: 'getLocalTime', arguments: '{"city":"Paris"}' },
        ],
      },
      result('a', 'get_weather', 'Rain'),
      result('b', 'getLocalTime', '{"status":"error","error":{"message":"clock offline"}}', true),
    ]);
    expect(reply.content).toBe(
      'Here is what I found: get_weather returned "Rain". Some of it is missing because getLocalTime failed: "clock offline".',
    );
  });

  it('answers with JSON built from the requested schema', async () => {
    const schema = {
      type: 'object',
      properties: {
        city: { type: 'string' },
        temperature: { type: 'number' },
        summary: { type: 'string' },
        conditions: { type: 'array', items: { type: 'string', enum: ['sunny', 'rain'] } },
        confident: { type: 'boolean' },
      },
      required: ['city', 'temperature', 'summary', 'conditions', 'confident'],
      additionalProperties: false,
    };
    const reply = await think(
      [
        user('Weather in Paris?'),
        called('a', 'get_weather', '{"city":"Paris"}'),
        result('a', 'get_weather', 'sunny, 21 C'),
      ],
      { outputSchema: { name: 'forecast', schema } },
    );
    expect(JSON.parse(reply.content!)).toEqual({
      city: 'Paris',
      temperature: 21,
      summary: 'Here is what I found: get_weather returned "sunny, 21 C".',
      conditions: ['sunny'],
      confident: true,
    });
  });
});
