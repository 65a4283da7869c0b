import { describe, expect, it, vi } from 'vitest';
import { KeelError } from '../errors/keel-error.js';
import type { RunEvent } from '../spec/run-events.js';
import type { ToolContext } from '../spec/tool.js';
import { FakeClock } from '../testing/fake-clock.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { agent } from './agent.js';
import { runRegistry } from './run/cancellation.js';
import { tool } from './tools/tool.js';

const cityInput = {
  type: 'object',
  properties: { city: { type: 'string' } },
  required: ['city'],
  additionalProperties: false,
} as const;

function weatherTool(contexts: ToolContext[] = []) {
  return tool({
    name: 'get_weather',
    description: 'Current weather for a city',
    input: cityInput,
    idempotent: true,
    execute: ({ city }: { city: string }, context) => {
      contexts.push(context);
      return { city, temperatureC: 21 };
    },
  });
}

describe('agent: a run', () => {
  it('calls a tool, feeds the result back as data and completes with the answer', async () => {
    const contexts: ToolContext[] = [];
    const model = scriptedModel([
      {
        toolCalls: [{ id: 'model-call-id', name: 'get_weather', arguments: { city: 'Paris' } }],
        usage: { inputTokens: 10, outputTokens: 5 },
      },
      { content: 'Sunny, 21 °C.', usage: { inputTokens: 20, outputTokens: 6 } },
    ]);
    const assistant = agent({
      name: 'weather',
      model,
      tools: [weatherTool(contexts)],
      instructions: 'Be brief.',
      clock: new FakeClock(),
    });

    const result = await assistant.run('Weather in Paris?', { runId: 'run-1' });

    expect(result.status).toBe('completed');
    expect(result.stopReason).toBe('final_answer');
    expect(result.output).toBe('Sunny, 21 °C.');
    expect(result.error).toBeUndefined();
    expect(result.usage).toEqual({ inputTokens: 30, outputTokens: 11 });
    expect(result.messages.map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(result.messages[3]).toEqual({
      role: 'tool',
      toolCallId: 'model-call-id',
      toolName: 'get_weather',
      content: '{"status":"success","content":{"city":"Paris","temperatureC":21}}',
    });
    // The second request carried the tool result, and the tools were described to the model.
    expect(model.calls[1]!.messages).toHaveLength(4);
    expect(model.calls[0]!.tools?.map((definition) => definition.name)).toEqual(['get_weather']);
    // The idempotency key comes from the run, the step and the call's position, never from the model's call id.
    expect(contexts).toHaveLength(1);
    expect(contexts[0]!.idempotencyKey).toBe('run-1:1:0');
    expect(contexts[0]!).toMatchObject({ runId: 'run-1', step: 1, callIndex: 0, attempt: 1 });
    expect(result.report).toMatchObject({
      steps: 2,
      requests: { total: 2, byModel: { 'scripted/scripted': 2 } },
      retries: { total: 0 },
      toolCalls: { total: 1, errors: 0, byTool: { get_weather: 1 } },
      errors: { total: 0 },
      usage: { inputTokens: 30, outputTokens: 11 },
    });
    expect(result.state.status).toBe('completed');
    expect(JSON.parse(JSON.stringify(result.state))).toEqual(result.state);
  });

  it('continues a conversation given as messages', async () => {
    const model = scriptedModel([{ content: 'It is still sunny.' }]);
    const assistant = agent({ model, instructions: 'Be brief.' });
    const result = await assistant.run([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: 'Sunny.' },
      { role: 'user', content: 'And now?' },
    ]);
    expect(result.status).toBe('completed');
    expect(model.calls[0]!.messages.map((message) => message.content)).toEqual([
      'Be brief.',
      'Weather in Paris?',
      'Sunny.',
      'And now?',
    ]);
  });

  it('emits typed events in order to the agent and to the run', async () => {
    const model = scriptedModel([
      { toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] },
      { content: 'Cold.' },
    ]);
    const agentEvents: RunEvent[] = [];
    const runEvents: RunEvent[] = [];
    const assistant = agent({
      model,
      tools: [weatherTool()],
      onEvent: (event) => agentEvents.push(event),
      clock: new FakeClock(),
    });
    const later: RunEvent[] = [];
    const subscription = assistant.onEvent((event) => later.push(event));

    await assistant.run('Weather in Oslo?', {
      onEvent: (event) => runEvents.push(event),
      runId: 'events-run',
    });
    subscription.dispose();

    expect(runEvents.map((event) => event.type)).toEqual([
      'run-start',
      'model-call-start',
      'model-call-end',
      'tool-call-start',
      'tool-call-end',
      'step-end',
      'model-call-start',
      'model-call-end',
      'run-end',
    ]);
    expect(agentEvents).toEqual(runEvents);
    expect(later).toEqual(runEvents);
    expect(runEvents.every((event) => event.runId === 'events-run')).toBe(true);
    const toolEnd = runEvents.find((event) => event.type === 'tool-call-end');
    expect(toolEnd).toMatchObject({
      toolName: 'get_weather',
      status: 'success',
      idempotencyKey: 'events-run:1:0',
    });
    const end = runEvents.at(-1);
    expect(end).toMatchObject({ type: 'run-end', status: 'completed', stopReason: 'final_answer' });
  });

  it('leaves the registry when the run ends, and refuses a run id in use', async () => {
    let release: (value: { content: string }) => void = () => {};
    const model = scriptedModel(() => new Promise((resolve) => (release = resolve)));
    const assistant = agent({ model });
    const first = assistant.run('hi', { runId: 'busy-run' });
    expect(runRegistry.isRunning('busy-run')).toBe(true);
    await expect(assistant.run('again', { runId: 'busy-run' })).rejects.toMatchObject({
      code: 'config.invalid',
    });
    release({ content: 'hello' });
    expect((await first).status).toBe('completed');
    expect(runRegistry.isRunning('busy-run')).toBe(false);
  });

  it('treats a listener that throws as a warning, not a failure', async () => {
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const model = scriptedModel([{ content: 'fine' }]);
    const assistant = agent({ model });
    const result = await assistant.run('hi', {
      onEvent: () => {
        throw new Error('listener bug');
      },
    });
    expect(result.status).toBe('completed');
    expect(warnings).toHaveBeenCalledWith(expect.stringContaining('listener bug'));
    warnings.mockRestore();
  });

  it('fails a run whose model throws an unexpected error, with the error classified', async () => {
    const model = scriptedModel([new TypeError('cannot read properties of undefined')]);
    const result = await agent({ model }).run('hi');
    expect(result.status).toBe('failed');
    expect(result.error).toBeInstanceOf(KeelError);
    expect(result.error?.code).toBe('internal.unexpected');
    expect(result.report.requests.total).toBe(1);
    expect(result.report.errors.byCode).toEqual({ 'internal.unexpected': 1 });
  });

  it('turns a malformed provider response into provider.invalid_response and retries it', async () => {
    const clock = new FakeClock();
    const broken = scriptedModel([{ content: 'ok' }]);
    let calls = 0;
    const model = {
      ...broken,
      generate: async (request: Parameters<typeof broken.generate>[0]) => {
        calls++;
        return calls === 1 ? ({ content: 42 } as never) : broken.generate(request);
      },
    };
    const pending = agent({ model, clock, retry: { delay: { next: () => 10 } } }).run('hi');
    await clock.runAll();
    const result = await pending;
    expect(result.status).toBe('completed');
    expect(result.report.errors.byCode).toEqual({ 'provider.invalid_response': 1 });
    expect(result.report.retries.model).toBe(1);
  });
});

describe('agent: options', () => {
  const model = scriptedModel([]);

  it.each([
    [{}, /model must be a model provider/],
    [{ model, fallbacks: [{}] }, /fallbacks\[0\] must be a model provider/],
    [{ model, nonsense: 1 }, /unknown option "nonsense"/],
    [{ model, limits: { maxTurns: 0 } }, /limits.maxTurns must be an integer of at least 1/],
    [{ model, limits: { timeoutMs: -1 } }, /limits.timeoutMs/],
    [{ model, limits: { maxTokns: 5 } }, /unknown limit "maxTokns"/],
    [{ model, modelTimeoutMs: 0 }, /modelTimeoutMs must be milliseconds above 0/],
    [{ model, retry: { maxAttempts: 0 } }, /retry.maxAttempts/],
    [{ model, retry: { runBudget: { maxRetries: -1 } } }, /maxRetries/],
    [{ model, onMaxTokens: 'ignore' }, /onMaxTokens must be 'fail' or 'continue'/],
    [{ model, tools: [weatherTool(), weatherTool()] }, /two tools are named "get_weather"/],
    [{ model, breaker: 5 }, /breaker must be breaker options or false/],
    [{ model, guardrails: [{}] }, /guardrails must be an array/],
  ])('rejects %j with config.invalid', (options, message) => {
    let thrown: unknown;
    try {
      agent(options as never);
    } catch (error) {
      thrown = error;
    }
    expect(KeelError.isInstance(thrown)).toBe(true);
    expect((thrown as KeelError).code).toBe('config.invalid');
    expect((thrown as KeelError).message).toMatch(message);
  });

  it.each([
    [[], undefined, /non-empty array of messages/],
    [[{ role: 'robot', content: 'x' }], undefined, /input\[0\] must be a message/],
    ['hi', { runId: '' }, /runId must be a non-empty string/],
    ['hi', { signal: 'stop' }, /signal must be an AbortSignal/],
    ['hi', { onTextDelta: 1 }, /onTextDelta must be a function/],
    ['hi', { extra: true }, /unknown option "extra"/],
  ])('rejects run(%j, %j) with config.invalid before starting', async (input, options, message) => {
    const scripted = scriptedModel([{ content: 'never' }]);
    const assistant = agent({ model: scripted });
    await expect(assistant.run(input as never, options as never)).rejects.toThrow(message);
    expect(scripted.calls).toHaveLength(0);
  });

  it('shares one breaker per provider and model, listed on the agent', () => {
    const primary = scriptedModel([], { provider: 'openai', model: 'gpt' });
    const backup = scriptedModel([], { provider: 'anthropic', model: 'haiku' });
    const assistant = agent({ model: primary, fallbacks: [backup, primary], tools: [weatherTool()] });
    expect([...assistant.breakers.keys()].sort()).toEqual([
      'anthropic/haiku',
      'openai/gpt',
      'tool:get_weather',
    ]);
    expect(agent({ model: primary, breaker: false, toolBreaker: false }).breakers.size).toBe(0);
  });
});
