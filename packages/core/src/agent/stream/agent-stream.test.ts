import { describe, expect, it } from 'vitest';
import { KeelError } from '../../errors/keel-error.js';
import type { ModelRequest } from '../../spec/model.js';
import { MemoryRunStore } from '../../store/memory-run-store.js';
import { FakeClock } from '../../testing/fake-clock.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { agent } from '../agent.js';
import { tool } from '../tools/tool.js';
import { PartQueue } from './part-queue.js';
import { PartWriter } from './part-writer.js';
import type { StreamPart } from './stream-part.js';

const cityInput = {
  type: 'object',
  properties: { city: { type: 'string' } },
  required: ['city'],
  additionalProperties: false,
} as const;

function weather(options: { needsApproval?: boolean; runs?: string[] } = {}) {
  return tool({
    name: 'get_weather',
    description: 'Current weather for a city',
    input: cityInput,
    idempotent: true,
    ...(options.needsApproval === undefined ? {} : { needsApproval: options.needsApproval }),
    execute: ({ city }: { city: string }) => {
      options.runs?.push(city);
      return { city, temperatureC: 21 };
    },
  });
}

async function collect<Output>(parts: AsyncIterable<StreamPart<Output>>): Promise<StreamPart<Output>[]> {
  const collected: StreamPart<Output>[] = [];
  for await (const part of parts) collected.push(part);
  return collected;
}

/** A model step that streams one delta, then waits until the call is aborted. */
function hangingAfterDelta(request: ModelRequest): Promise<never> {
  request.onTextDelta?.('Here is what I');
  return new Promise((_, reject) => {
    request.signal.addEventListener('abort', () => reject(request.signal.reason), { once: true });
  });
}

describe('agent.stream: parts', () => {
  it('gives the steps, the tool call, its result, the text and the result last, in order', async () => {
    const model = scriptedModel([
      { toolCalls: [{ id: 'call-1', name: 'get_weather', arguments: { city: 'Paris' } }] },
      { content: 'Sunny, 21 °C.', textDeltas: ['Sunny', ', 21', ' °C.'] },
    ]);
    const assistant = agent({ model, tools: [weather()], clock: new FakeClock() });

    const stream = assistant.stream('Weather in Paris?', { runId: 'run-1' });
    const parts = await collect(stream);
    const result = await stream.result;

    expect(stream.runId).toBe('run-1');
    expect(result.status).toBe('completed');
    expect(parts.map((part) => part.type)).toEqual([
      'step-start',
      'tool-call-start',
      'tool-call-delta',
      'tool-call-end',
      'tool-result',
      'step-end',
      'step-start',
      'text-delta',
      'text-delta',
      'text-delta',
      'finish',
    ]);
    expect(parts[1]).toEqual({
      type: 'tool-call-start',
      step: 1,
      index: 0,
      toolCallId: 'call-1',
      toolName: 'get_weather',
    });
    expect(parts[3]).toMatchObject({ type: 'tool-call-end', arguments: '{"city":"Paris"}' });
    expect(parts[4]).toMatchObject({
      type: 'tool-result',
      step: 1,
      toolCallId: 'call-1',
      result: { status: 'success', content: { city: 'Paris', temperatureC: 21 } },
    });
    const text = parts.flatMap((part) => (part.type === 'text-delta' ? [part.delta] : [])).join('');
    expect(text).toBe(result.output);
    expect(parts.at(-1)).toEqual({ type: 'finish', result });
  });

  it('passes on the reasoning and tool-call parts a provider streams, without repeating them', async () => {
    const model = scriptedModel([
      (request) => {
        request.onStreamPart?.({ type: 'reasoning-delta', delta: 'Paris, so weather.' });
        request.onStreamPart?.({
          type: 'tool-call-start',
          index: 0,
          toolCallId: 'c',
          toolName: 'get_weather',
        });
        request.onStreamPart?.({ type: 'tool-call-delta', index: 0, toolCallId: 'c', delta: '{"city":' });
        request.onStreamPart?.({ type: 'tool-call-delta', index: 0, toolCallId: 'c', delta: '"Paris"}' });
        request.onStreamPart?.({
          type: 'tool-call-end',
          index: 0,
          toolCallId: 'c',
          toolName: 'get_weather',
          arguments: '{"city":"Paris"}',
        });
        return { toolCalls: [{ id: 'c', name: 'get_weather', arguments: '{"city":"Paris"}' }] };
      },
      { content: 'Sunny.' },
    ]);
    const assistant = agent({ model, tools: [weather()], clock: new FakeClock() });

    const parts = await collect(assistant.stream('Weather in Paris?'));

    expect(parts.slice(0, 6).map((part) => part.type)).toEqual([
      'step-start',
      'reasoning-delta',
      'tool-call-start',
      'tool-call-delta',
      'tool-call-delta',
      'tool-call-end',
    ]);
    expect(parts.filter((part) => part.type === 'tool-call-start')).toHaveLength(1);
    expect(parts.filter((part) => part.type === 'tool-call-end')).toHaveLength(1);
  });

  it('reads the text alone through textStream, and the parts through a web ReadableStream', async () => {
    const script = [{ content: 'Sunny in Paris.', textDeltas: ['Sunny', ' in Paris.'] }];
    const textAgent = agent({ model: scriptedModel(script), clock: new FakeClock() });
    const texts: string[] = [];
    const textRun = textAgent.stream('Weather?');
    for await (const delta of textRun.textStream) texts.push(delta);
    expect(texts).toEqual(['Sunny', ' in Paris.']);
    expect((await textRun.result).output).toBe('Sunny in Paris.');

    const readableAgent = agent({ model: scriptedModel(script), clock: new FakeClock() });
    const readable = readableAgent.stream('Weather?').toReadableStream();
    const types: string[] = [];
    const reader = readable.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      types.push(value.type);
    }
    expect(types).toEqual(['step-start', 'text-delta', 'text-delta', 'finish']);
  });

  it('gives the run error before the result, and calls the caller’s own onTextDelta and onEvent too', async () => {
    const model = scriptedModel([new KeelError('provider.auth', 'bad key')]);
    const deltas: string[] = [];
    const events: string[] = [];
    const assistant = agent({ model, clock: new FakeClock() });

    const stream = assistant.stream('Hi', {
      onTextDelta: (delta) => deltas.push(delta),
      onEvent: (event) => events.push(event.type),
    });
    const parts = await collect(stream);

    expect(parts.map((part) => part.type)).toEqual(['step-start', 'error', 'finish']);
    expect(parts[1]).toMatchObject({ type: 'error', error: { code: 'provider.auth' } });
    expect(events).toContain('run-end');
    expect(deltas).toEqual([]);
  });

  it('rejects result and the iteration with config.invalid for bad options, and refuses a second reader', async () => {
    const assistant = agent({ model: scriptedModel([{ content: 'ok' }]), clock: new FakeClock() });
    const bad = assistant.stream('Hi', { highWaterMark: 0 });
    await expect(bad.result).rejects.toMatchObject({
      code: 'config.invalid',
      data: { option: 'highWaterMark' },
    });
    await expect(collect(bad)).rejects.toMatchObject({ code: 'config.invalid' });
    await expect(assistant.stream('Hi', 'fast' as never).result).rejects.toMatchObject({
      code: 'config.invalid',
    });
    const unknown = assistant.stream('Hi', { nope: true } as never);
    await expect(unknown.result).rejects.toMatchObject({ code: 'config.invalid' });

    const stream = assistant.stream('Hi');
    await collect(stream);
    expect(() => stream.textStream[Symbol.asyncIterator]()).toThrow(/read once only/);
  });
});

describe('agent.stream: cancellation', () => {
  it('cancels the run when the reader leaves the loop early: result settles cancelled', async () => {
    const assistant = agent({ model: scriptedModel(hangingAfterDelta), clock: new FakeClock() });
    const stream = assistant.stream('Open a ticket');

    for await (const part of stream) if (part.type === 'text-delta') break;
    const result = await stream.result;

    expect(result.status).toBe('cancelled');
    expect(result.error?.code).toBe('run.cancelled');
  });

  it('cancels the run when the caller’s signal aborts, and ends the parts with the error and the result', async () => {
    const assistant = agent({ model: scriptedModel(hangingAfterDelta), clock: new FakeClock() });
    const controller = new AbortController();
    const stream = assistant.stream('Open a ticket', { signal: controller.signal });
    const parts: StreamPart[] = [];
    for await (const part of stream) {
      parts.push(part);
      if (part.type === 'text-delta') controller.abort('user left');
    }

    expect(parts.map((part) => part.type)).toEqual(['step-start', 'text-delta', 'error', 'finish']);
    expect((await stream.result).status).toBe('cancelled');
  });

  it('cancels the run when the reader leaves a textStream loop early', async () => {
    const assistant = agent({ model: scriptedModel(hangingAfterDelta), clock: new FakeClock() });
    const stream = assistant.stream('Open a ticket');
    for await (const delta of stream.textStream) if (delta !== '') break;
    expect((await stream.result).status).toBe('cancelled');
  });

  it('cancels the run when its ReadableStream is cancelled', async () => {
    const assistant = agent({ model: scriptedModel(hangingAfterDelta), clock: new FakeClock() });
    const stream = assistant.stream('Open a ticket');
    const reader = stream.toReadableStream().getReader();
    expect((await reader.read()).value?.type).toBe('step-start');
    await reader.cancel();
    expect((await stream.result).status).toBe('cancelled');
  });
});

describe('agent.stream: back-pressure', () => {
  it('holds a bounded number of parts for a reader that never reads, merging deltas past the mark', async () => {
    const deltas = Array.from({ length: 20_000 }, (_, index) => `w${index} `);
    const model = scriptedModel([{ content: deltas.join(''), textDeltas: deltas }]);
    const assistant = agent({ model, clock: new FakeClock() });

    const stream = assistant.stream('Write a lot', { highWaterMark: 100 });
    const result = await stream.result;
    const parts = await collect(stream);

    expect(result.status).toBe('completed');
    // The mark, plus the merged delta and the parts that are not deltas (step-start, finish).
    expect(parts.length).toBeLessThanOrEqual(103);
    const text = parts.flatMap((part) => (part.type === 'text-delta' ? [part.delta] : [])).join('');
    expect(text).toBe(result.output);
  });

  it('holds the run between steps while the reader is behind, and lets it go on as the reader catches up', async () => {
    const steps = 6;
    const script = [
      ...Array.from({ length: steps - 1 }, (_, index) => ({
        toolCalls: [{ id: `call-${index}`, name: 'get_weather', arguments: { city: `City ${index}` } }],
      })),
      { content: 'Done.' },
    ];
    const model = scriptedModel(script);
    const assistant = agent({ model, tools: [weather()], clock: new FakeClock() });

    const stream = assistant.stream('Weather everywhere', { highWaterMark: 4 });
    let settled = false;
    void stream.result.then(() => {
      settled = true;
    });
    for (let turn = 0; turn < 50; turn++) await new Promise((resolve) => setImmediate(resolve));
    // Each step writes 6 parts or more: the run stopped after its first step, its reader having read nothing.
    expect(model.calls.length).toBe(1);
    expect(settled).toBe(false);

    const parts = await collect(stream);
    const result = await stream.result;
    expect(result.status).toBe('completed');
    expect(model.calls.length).toBe(steps);
    expect(parts.filter((part) => part.type === 'tool-result')).toHaveLength(steps - 1);
  });

  it('merges deltas only into their own kind and call, never across another part', () => {
    const queue = new PartQueue<string>(2);
    queue.push({ type: 'text-delta', step: 0, delta: 'a' });
    queue.push({ type: 'reasoning-delta', step: 0, delta: 'r' });
    queue.push({ type: 'text-delta', step: 0, delta: 'b' });
    queue.push({ type: 'tool-call-delta', step: 0, index: 0, toolCallId: 'x', delta: '{' });
    queue.push({ type: 'tool-call-delta', step: 0, index: 1, toolCallId: 'y', delta: '[' });
    queue.push({ type: 'tool-call-delta', step: 0, index: 0, toolCallId: 'x', delta: '}' });
    queue.push({ type: 'step-end', step: 0, toolCalls: 2 });
    queue.push({ type: 'text-delta', step: 1, delta: 'c' });
    expect(queue.size).toBe(6);
  });
});

describe('agent.stream: same runs as run()', () => {
  it('waits for approvals as run() does: an approval-required part, then the interrupted result', async () => {
    const runs: string[] = [];
    const model = scriptedModel([
      { toolCalls: [{ id: 'call-1', name: 'get_weather', arguments: { city: 'Paris' } }] },
      { content: 'Sunny.' },
    ]);
    const store = new MemoryRunStore();
    const assistant = agent({
      model,
      tools: [weather({ needsApproval: true, runs })],
      store,
      clock: new FakeClock(),
    });

    const stream = assistant.stream('Weather in Paris?', { runId: 'approve-me' });
    const parts = await collect(stream);
    const result = await stream.result;

    expect(result.status).toBe('interrupted');
    const waiting = parts.find((part) => part.type === 'approval-required');
    expect(waiting).toMatchObject({ pending: [{ kind: 'approval', toolName: 'get_weather' }] });
    expect(parts.at(-1)?.type).toBe('finish');
    expect(runs).toEqual([]);

    const resumed = await assistant.resume('approve-me', {
      approvals: { [result.pending![0]!.idempotencyKey]: { approved: true } },
    });
    expect(resumed.status).toBe('completed');
    expect(runs).toEqual(['Paris']);
  });

  it('runs on a session and appends its turns, as run() does', async () => {
    const store = new MemoryRunStore();
    const model = scriptedModel([{ content: 'Hello.' }, { content: 'Again.' }]);
    const assistant = agent({ model, store, clock: new FakeClock() });

    const first = assistant.stream('Hi', { sessionId: 'chat-1' });
    await collect(first);
    expect((await first.result).session?.outcome).toBe('saved');
    const second = await assistant.run('Hi again', { sessionId: 'chat-1' });
    expect(second.messages.map((message) => message.content)).toContain('Hello.');
  });
});

describe('agent.stream: recovery parts', () => {
  it('maps stream-recovered to a recovery part and gives no text again for the step', () => {
    const queue = new PartQueue<string>(10);
    const writer = new PartWriter<string>(queue);
    const base = { runId: 'r', atMs: 0 };
    writer.event({ ...base, type: 'model-call-start', step: 0, model: 'm/a', attempt: 1, messages: [] });
    writer.text('Here is');
    writer.event({
      ...base,
      type: 'stream-recovered',
      step: 0,
      errorCode: 'network.connection',
      mode: 'continued',
      keptCharacters: 7,
      model: 'm/a',
    });
    writer.event({
      ...base,
      type: 'model-call-end',
      step: 0,
      model: 'm/a',
      attempt: 2,
      durationMs: 1,
      outcome: 'success',
      content: 'Here is the answer',
      toolCalls: [],
    });
    expect(queue.size).toBe(3);
  });
});
