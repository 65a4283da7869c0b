import type { Message, ModelRequest } from '@keel/core';
import type { ToolDefinition } from '@keel/core/adapter';
import { afterEach, describe, expect, it } from 'vitest';
import { type SimulatedProvider, simulated } from './provider.js';
import { startSimulatedServer } from './server.js';

const providers: SimulatedProvider[] = [];
afterEach(async () => {
  await Promise.all(providers.splice(0).map((provider) => provider.close()));
});

function track(provider: SimulatedProvider): SimulatedProvider {
  providers.push(provider);
  return provider;
}

const weather: ToolDefinition = {
  name: 'get_weather',
  description: 'Current weather for a city',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

function ask(messages: Message[], extra: Partial<ModelRequest> = {}): ModelRequest {
  return { messages, tools: [weather], signal: new AbortController().signal, ...extra };
}

const question: Message = { role: 'user', content: 'What is the weather in Paris?' };

async function failure(promise: Promise<unknown>): Promise<Record<string, unknown>> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: Record<string, unknown>) => error,
  );
}

describe('simulated provider over real HTTP', () => {
  it('calls a tool, then answers quoting its result', async () => {
    const model = track(simulated());
    expect([model.provider, model.model, model.contextWindowTokens]).toEqual([
      'simulated',
      'sim-primary',
      undefined,
    ]);
    const first = await model.generate(ask([question]));
    expect(first).toMatchObject({ finishReason: 'tool_calls', model: 'sim-primary', content: '' });
    expect(first.toolCalls).toEqual([
      { id: 'call_sim_0_0', name: 'get_weather', arguments: '{"city":"Paris"}' },
    ]);
    const second = await model.generate(
      ask([
        question,
        { role: 'assistant', content: '', toolCalls: first.toolCalls },
        {
          role: 'tool',
          toolCallId: 'call_sim_0_0',
          toolName: 'get_weather',
          content: '{"status":"success","content":"Sunny"}',
        },
      ]),
    );
    expect(second.content).toBe('Here is what I found: get_weather returned "Sunny".');
    expect(second.finishReason).toBe('stop');
    expect(second.usage.inputTokens).toBeGreaterThan(0);
  });

  it('streams text deltas through onTextDelta', async () => {
    const model = track(simulated({ brain: () => ({ content: 'It is sunny in Paris today.' }) }));
    const deltas: string[] = [];
    const response = await model.generate(ask([question], { onTextDelta: (delta) => deltas.push(delta) }));
    expect(response.content).toBe('It is sunny in Paris today.');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(response.content);
    expect((await model.server()).requests[0]?.stream).toBe(true);
  });

  it('turns each transport fault into the right KeelError, naming the provider', async () => {
    const model = track(
      simulated({
        faults: {
          retryAfterMs: 250,
          sequence: [
            'rate_limit',
            'overloaded',
            'bad_gateway',
            'context_overflow',
            'malformed_json',
            'truncated_json',
            'reset',
          ],
        },
      }),
    );
    const expected = [
      { code: 'provider.rate_limited', status: 429, retryAfterMs: 250 },
      { code: 'provider.overloaded', status: 529 },
      { code: 'provider.server_error', status: 502 },
      { code: 'provider.context_overflow', status: 400 },
      { code: 'provider.invalid_response' },
      { code: 'provider.invalid_response' },
    ];
    for (const fields of expected) {
      const error = await failure(model.generate(ask([question])));
      expect(error).toMatchObject({ ...fields, provider: 'simulated' });
    }
    const reset = await failure(model.generate(ask([question])));
    expect(reset.retryable).toBe(true);
    expect(['network.connection', 'provider.invalid_response']).toContain(reset.code);
  });

  it('serves a fallback model on the same server with its own schedule', async () => {
    const primary = track(simulated({ faults: 'sim-primary:server_error=1' }));
    const fallback = primary.withModel('sim-fallback', { contextWindowTokens: 64_000 });
    expect(fallback.contextWindowTokens).toBe(64_000);
    expect(await failure(primary.generate(ask([question])))).toMatchObject({ code: 'provider.server_error' });
    expect((await fallback.generate(ask([question]))).toolCalls).toHaveLength(1);
    const server = await fallback.server();
    expect(server).toBe(await primary.server());
    expect(server.requests.map((request) => [request.model, request.fault])).toEqual([
      ['sim-primary', 'server_error'],
      ['sim-fallback', 'none'],
    ]);
  });

  it('enforces its context window', async () => {
    const model = track(simulated({ contextWindowTokens: 20 }));
    expect(model.contextWindowTokens).toBe(20);
    const long: Message = { role: 'user', content: 'Paris '.repeat(50) };
    expect(await failure(model.generate(ask([long], { tools: [] })))).toMatchObject({
      code: 'provider.context_overflow',
    });
  });

  it('plays the demo preset: a retry, a correction and a fallback', async () => {
    const primary = track(simulated({ faults: 'demo' }));
    const fallback = primary.withModel('sim-fallback');
    // What a run loop with three attempts per model would do.
    expect(await failure(primary.generate(ask([question])))).toMatchObject({ code: 'provider.rate_limited' });
    const broken = await primary.generate(ask([question]));
    const [call] = broken.toolCalls;
    expect(() => JSON.parse(call!.arguments)).toThrow();
    const conversation: Message[] = [
      question,
      { role: 'assistant', content: '', toolCalls: broken.toolCalls },
      {
        role: 'tool',
        toolCallId: call!.id,
        toolName: 'get_weather',
        content: JSON.stringify({
          status: 'error',
          error: { code: 'tool.invalid_input', message: 'arguments are not valid JSON' },
        }),
      },
    ];
    const corrected = await primary.generate(ask(conversation));
    expect(corrected.toolCalls.map((fixed) => [fixed.name, fixed.arguments])).toEqual([
      ['get_weather', '{"city":"Paris"}'],
    ]);
    conversation.push(
      { role: 'assistant', content: corrected.content, toolCalls: corrected.toolCalls },
      {
        role: 'tool',
        toolCallId: corrected.toolCalls[0]!.id,
        toolName: 'get_weather',
        content: 'Sunny, 21°C',
      },
    );
    for (let attempt = 0; attempt < 3; attempt++) {
      expect(await failure(primary.generate(ask(conversation)))).toMatchObject({
        code: 'provider.overloaded',
      });
    }
    const answer = await fallback.generate(ask(conversation));
    expect(answer).toMatchObject({ model: 'sim-fallback', finishReason: 'stop' });
    expect(answer.content).toContain('get_weather returned "Sunny, 21°C"');
    expect((await primary.server()).stats).toMatchObject({
      rate_limit: 1,
      invalid_tool_arguments: 1,
      overloaded: 3,
      none: 2,
    });
  });

  it('stops a hanging request when the caller aborts, and closes promptly', async () => {
    let hanging!: () => void;
    const started = new Promise<void>((resolve) => {
      hanging = resolve;
    });
    const model = track(
      simulated({ faults: 'hang=1', onRequest: (record) => record.fault === 'hang' && hanging() }),
    );
    const controller = new AbortController();
    const reason = new Error('user pressed ctrl-c');
    const pending = model.generate(ask([question], { signal: controller.signal }));
    await started;
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await model.close();
  });

  it('starts a fresh server after close, and leaves a server it was given running', async () => {
    const model = track(simulated());
    const firstUrl = (await model.server()).url;
    await model.close();
    await model.generate(ask([question]));
    expect((await model.server()).url).not.toBe(firstUrl);

    const shared = await startSimulatedServer({ faults: { sequence: ['unavailable'] } });
    try {
      const guest = simulated({ server: shared });
      expect(await failure(guest.generate(ask([question])))).toMatchObject({
        code: 'provider.overloaded',
        status: 503,
      });
      await guest.close();
      expect((await fetch(`${shared.url}/models`)).status).toBe(200);
    } finally {
      await shared.close();
    }
  });

  it('rejects bad options with config.invalid', () => {
    expect(() => simulated({ faults: 'rate_limit=lots' })).toThrow(
      expect.objectContaining({ code: 'config.invalid' }),
    );
    expect(() => simulated({ model: '' })).toThrow(/non-empty model name/);
    expect(() => simulated({ contextWindowTokens: -1 })).toThrow(/contextWindowTokens/);
    expect(() => simulated().withModel('x', { faults: 'y:reset=1' })).toThrow(/remove the MODEL: prefixes/);
  });
});
