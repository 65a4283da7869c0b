import { afterEach, describe, expect, it } from 'vitest';
import { FAULT_KINDS, type FaultKind } from './faults.js';
import { type SimulatedServer, startSimulatedServer } from './server.js';
import type { SimulatedServerOptions } from './server-options.js';

type WireCall = { id: string; type: string; function: { name: string; arguments: string } };

/** The parts of OpenAI's bodies these tests read. */
interface WireBody {
  id: string;
  object: string;
  model: string;
  choices: [
    {
      index: number;
      finish_reason: string;
      message: {
        role: string;
        content: string | null;
        tool_calls?: [WireCall, ...WireCall[]];
      };
    },
  ];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  error: { message: string; type: string; code: string | null; param: string | null };
  data: { id: string }[];
}

async function json(response: Response): Promise<WireBody> {
  return (await response.json()) as WireBody;
}

const servers: SimulatedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function start(options: SimulatedServerOptions = {}): Promise<SimulatedServer> {
  const server = await startSimulatedServer(options);
  servers.push(server);
  return server;
}

const weather = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

function chat(server: SimulatedServer, body: Record<string, unknown> = {}, init: RequestInit = {}) {
  return fetch(`${server.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'sim-primary',
      messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
      tools: [weather],
      ...body,
    }),
    ...init,
  });
}

/** A server whose first request gets `fault`. */
function faulty(fault: FaultKind, options: SimulatedServerOptions = {}) {
  return start({ faults: { sequence: [fault] }, ...options });
}

describe('simulated server faults over HTTP', () => {
  it('answers normally with a tool call when no fault is scheduled', async () => {
    const server = await start();
    const response = await chat(server);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('req_sim_0');
    const body = await json(response);
    expect(body).toMatchObject({
      id: 'chatcmpl-sim-0',
      object: 'chat.completion',
      model: 'sim-primary',
      choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null } }],
    });
    expect(body.choices[0].message.tool_calls).toEqual([
      {
        id: 'call_sim_0_0',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
      },
    ]);
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens);
    expect(server.requests[0]).toMatchObject({
      scheduled: 'none',
      fault: 'none',
      status: 200,
      modelIndex: 0,
    });
  });

  it('rate_limit: 429 with retry-after in seconds and retry-after-ms', async () => {
    const server = await start({ faults: { sequence: ['rate_limit'], retryAfterMs: 1500 } });
    const response = await chat(server);
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(response.headers.get('retry-after-ms')).toBe('1500');
    expect(response.headers.get('x-simulated-fault')).toBe('rate_limit');
    const body = await json(response);
    expect(body.error).toMatchObject({ type: 'requests', code: 'rate_limit_exceeded' });
    expect(server.requests[0]).toMatchObject({ fault: 'rate_limit', status: 429 });
  });

  it('rate_limit defaults to a one second wait', async () => {
    const server = await faulty('rate_limit');
    const response = await chat(server);
    expect([response.headers.get('retry-after'), response.headers.get('retry-after-ms')]).toEqual([
      '1',
      '1000',
    ]);
  });

  it.each([
    ['server_error', 500, 'server_error', null],
    ['unavailable', 503, 'server_error', 'service_unavailable'],
    ['overloaded', 529, 'server_error', 'overloaded'],
  ] as const)('%s: %d with an OpenAI error body', async (fault, status, type, code) => {
    const server = await faulty(fault);
    const response = await chat(server);
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toBe('application/json');
    const body = await json(response);
    expect(body.error).toMatchObject({ type, code });
    expect(typeof body.error.message).toBe('string');
    expect(server.requests[0]).toMatchObject({ fault, status });
  });

  it('bad_gateway: 502 with an HTML page, as a proxy sends', async () => {
    const server = await faulty('bad_gateway');
    const response = await chat(server);
    expect(response.status).toBe(502);
    expect(response.headers.get('content-type')).toBe('text/html');
    expect(await response.text()).toContain('<title>502 Bad Gateway</title>');
  });

  it('context_overflow: 400 with error.code context_length_exceeded', async () => {
    const server = await faulty('context_overflow');
    const response = await chat(server);
    expect(response.status).toBe(400);
    const body = await json(response);
    expect(body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'context_length_exceeded',
      param: 'messages',
    });
    expect(body.error.message).toMatch(/maximum context length is 8192 tokens/);
  });

  it('a prompt longer than the model context window overflows without any scheduled fault', async () => {
    const server = await start({ models: { small: { contextWindowTokens: 10 } } });
    const long = await chat(server, {
      model: 'small',
      messages: [{ role: 'user', content: 'word '.repeat(40) }],
    });
    expect(long.status).toBe(400);
    expect((await json(long)).error.message).toMatch(/maximum context length is 10 tokens/);
    const other = await chat(server, {
      model: 'large',
      messages: [{ role: 'user', content: 'word '.repeat(40) }],
    });
    expect(other.status).toBe(200);
    expect(server.requests.map((request) => [request.scheduled, request.fault])).toEqual([
      ['none', 'context_overflow'],
      ['none', 'none'],
    ]);
  });

  it('malformed_json: a 200 that says JSON but is not', async () => {
    const server = await faulty('malformed_json');
    const response = await chat(server);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const text = await response.text();
    expect(() => JSON.parse(text)).toThrow();
  });

  it('truncated_json: a complete 200 exchange whose JSON stops half way', async () => {
    const server = await faulty('truncated_json');
    const response = await chat(server);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text.startsWith('{"id":"chatcmpl-sim-0"')).toBe(true);
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
    expect(server.requests[0]).toMatchObject({ fault: 'truncated_json', status: 200 });
  });

  it('reset: headers and part of the body arrive, then the connection is reset', async () => {
    const server = await faulty('reset');
    const response = await chat(server);
    expect(response.status).toBe(200);
    const declared = Number(response.headers.get('content-length'));
    const reader = response.body!.getReader();
    let received = 0;
    const error = await (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return undefined;
          received += value.byteLength;
        }
      } catch (caught) {
        return caught as Error;
      }
    })();
    expect(error).toBeInstanceOf(TypeError);
    expect(error?.cause).toMatchObject({ code: 'UND_ERR_SOCKET' });
    expect(received).toBeGreaterThan(0);
    expect(received).toBeLessThan(declared);
    expect(server.requests[0]).toMatchObject({ fault: 'reset' });
  });

  it('invalid_tool_arguments: a tool call whose arguments are not JSON', async () => {
    const server = await faulty('invalid_tool_arguments');
    const body = await json(await chat(server));
    const [call] = body.choices[0].message.tool_calls!;
    expect(call.function.name).toBe('get_weather');
    expect(() => JSON.parse(call.function.arguments)).toThrow();
    expect(body.choices[0].finish_reason).toBe('tool_calls');
  });

  it('invalid_tool_arguments turns a text answer into a broken call when tools are offered', async () => {
    const server = await faulty('invalid_tool_arguments');
    const body = await json(await chat(server, { messages: [{ role: 'user', content: 'Say hello' }] }));
    expect(body.choices[0].message.tool_calls).toHaveLength(1);
    expect(() => JSON.parse(body.choices[0].message.tool_calls![0].function.arguments)).toThrow();
  });

  it('invalid_tool_arguments cannot apply without tools: served as none, and the log says so', async () => {
    const server = await faulty('invalid_tool_arguments');
    const response = await chat(server, { tools: undefined });
    const body = await json(response);
    expect(body.choices[0].message.tool_calls).toBeUndefined();
    expect(server.requests[0]).toMatchObject({ scheduled: 'invalid_tool_arguments', fault: 'none' });
    expect(server.stats.invalid_tool_arguments).toBe(0);
    expect(server.stats.none).toBe(1);
  });

  it('unknown_tool: a tool call naming a tool that was not offered', async () => {
    const server = await faulty('unknown_tool');
    const body = await json(await chat(server));
    const [call] = body.choices[0].message.tool_calls!;
    expect(call.function.name).toBe('get_weather_v2');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
  });

  it('max_tokens: finish_reason length with partial content', async () => {
    const server = await faulty('max_tokens', {
      brain: () => ({ content: 'The weather in Paris is sunny and warm all afternoon today.' }),
    });
    const body = await json(await chat(server));
    expect(body.choices[0].finish_reason).toBe('length');
    const content = body.choices[0].message.content ?? '';
    expect(content.length).toBeGreaterThan(0);
    expect('The weather in Paris is sunny and warm all afternoon today.'.startsWith(content)).toBe(true);
    expect(content.length).toBeLessThan(40);
    expect(body.choices[0].message.tool_calls).toBeUndefined();
  });

  it('cuts content longer than the request max_tokens with finish_reason length', async () => {
    const server = await start({ brain: () => ({ content: 'x'.repeat(100) }) });
    const body = await json(await chat(server, { max_tokens: 5 }));
    expect(body.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: 'x'.repeat(20) } });
    expect(server.requests[0]?.fault).toBe('max_tokens');
  });

  it('hang: never answers; the client abort ends it and close() still finishes', async () => {
    let hanging!: () => void;
    const started = new Promise<void>((resolve) => {
      hanging = resolve;
    });
    const server = await startSimulatedServer({
      faults: { sequence: ['hang'] },
      onRequest: (record) => record.fault === 'hang' && hanging(),
    });
    const controller = new AbortController();
    const pending = chat(server, {}, { signal: controller.signal });
    await started;
    expect(server.requests[0]).toMatchObject({ fault: 'hang', status: undefined });
    controller.abort(new Error('caller gave up'));
    await expect(pending).rejects.toThrow('caller gave up');
    await server.close();
  });

  it('close() with a hanging request in flight destroys its connection and resolves', async () => {
    let hanging!: () => void;
    const started = new Promise<void>((resolve) => {
      hanging = resolve;
    });
    const server = await startSimulatedServer({ faults: 'hang=1', onRequest: () => hanging() });
    const pending = chat(server).then(
      () => 'answered',
      (error: unknown) => error,
    );
    await started;
    await server.close();
    expect(await pending).toBeInstanceOf(TypeError);
    await server.close(); // idempotent
  });

  it('per-model schedules: the primary fails while the fallback answers', async () => {
    const server = await start({
      faults: 'sim-primary:server_error=1,seed=3',
      models: { extra: { faults: 'sequence=overloaded>none' } },
    });
    const statuses = [];
    for (const model of ['sim-primary', 'sim-fallback', 'sim-primary', 'extra', 'extra']) {
      statuses.push((await chat(server, { model })).status);
    }
    expect(statuses).toEqual([500, 200, 500, 529, 200]);
    expect(server.requests.map((request) => request.modelIndex)).toEqual([0, 0, 1, 0, 1]);
    expect(server.stats).toMatchObject({ server_error: 2, overloaded: 1, none: 2 });
  });

  it('configureModel changes a model from its next request on', async () => {
    const server = await start();
    expect((await chat(server)).status).toBe(200);
    server.configureModel('sim-primary', { faults: { sequence: ['none', 'unavailable'] } });
    expect((await chat(server)).status).toBe(503);
  });

  it('counts every fault kind it serves in stats', async () => {
    // An unstreamed stall is a hang: both wait for the client.
    const kinds = FAULT_KINDS.filter((kind) => kind !== 'hang' && kind !== 'stall');
    const server = await start({ faults: { sequence: kinds } });
    for (const _ of kinds) await (await chat(server)).arrayBuffer().catch(() => undefined);
    for (const kind of kinds) expect(server.stats[kind], kind).toBe(1);
    expect(server.stats.hang).toBe(0);
    expect(server.stats.stall).toBe(0);
  });

  it('rejects bad requests with 400 and the param at fault', async () => {
    const server = await start();
    const notJson = await fetch(`${server.url}/chat/completions`, { method: 'POST', body: '{nope' });
    expect(notJson.status).toBe(400);
    const noModel = await chat(server, { model: undefined });
    expect((await json(noModel)).error).toMatchObject({ param: 'model', type: 'invalid_request_error' });
    const orphan = await chat(server, { messages: [{ role: 'tool', tool_call_id: 'x', content: 'hi' }] });
    expect(orphan.status).toBe(400);
    expect(server.stats.none).toBe(0);
  });

  it('answers 404 on unknown paths, 405 on GET completions, and lists models', async () => {
    const server = await start({ models: { 'sim-primary': {} } });
    expect((await fetch(`${server.url}/embeddings`, { method: 'POST' })).status).toBe(404);
    expect((await fetch(`${server.url}/chat/completions`)).status).toBe(405);
    const models = await json(await fetch(`${server.url}/models`));
    expect(models.data.map((model: { id: string }) => model.id)).toEqual(['sim-primary']);
    expect(server.requests.map((request) => request.status)).toEqual([404, 405, 200]);
  });

  it('checks the bearer key when apiKey is set', async () => {
    const server = await start({ apiKey: 'sk-sim' });
    expect((await chat(server)).status).toBe(401);
    expect((await chat(server, {}, { headers: { authorization: 'Bearer sk-sim' } })).status).toBe(200);
  });

  it('answers 500 with the reason when a scripted brain throws', async () => {
    const server = await start({
      brain: () => {
        throw new Error('script ran out');
      },
    });
    const response = await chat(server);
    expect(response.status).toBe(500);
    expect((await json(response)).error.message).toContain('script ran out');
    expect(server.requests[0]?.brainError).toBe('script ran out');
  });

  it('rejects bad options with config.invalid', async () => {
    await expect(startSimulatedServer({ port: -1 })).rejects.toMatchObject({ code: 'config.invalid' });
    await expect(startSimulatedServer({ faults: 'rate_limit=2' })).rejects.toMatchObject({
      code: 'config.invalid',
      message: expect.stringContaining('rate_limit'),
    });
    await expect(startSimulatedServer({ models: { m: { contextWindowTokens: 0 } } })).rejects.toMatchObject({
      code: 'config.invalid',
      message: expect.stringContaining('models.m.contextWindowTokens'),
    });
  });
});
