import { describe, expect, it } from 'vitest';
import { KeelError } from '../errors/keel-error.js';
import type { ModelRequest } from '../spec/model.js';
import { scriptedModel } from './scripted-model.js';

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { messages: [{ role: 'user', content: 'Hi' }], signal: new AbortController().signal, ...overrides };
}

describe('scriptedModel', () => {
  it('answers with the steps in order, filling defaults, and records each request', async () => {
    const model = scriptedModel([
      {
        toolCalls: [
          { name: 'get_weather', arguments: { city: 'Paris' } },
          { name: 'raw', arguments: '{oops' },
        ],
      },
      { content: 'Sunny.', usage: { inputTokens: 10 }, model: 'other' },
    ]);
    const messages = request().messages;
    const first = await model.generate(request({ messages }));
    messages.push({ role: 'assistant', content: 'later' });
    const second = await model.generate(request());
    expect(first).toEqual({
      content: '',
      toolCalls: [
        { id: 'call_0_0', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { id: 'call_0_1', name: 'raw', arguments: '{oops' },
      ],
      finishReason: 'tool_calls',
      usage: { inputTokens: 0, outputTokens: 0 },
      model: 'scripted',
    });
    expect(second).toMatchObject({
      content: 'Sunny.',
      finishReason: 'stop',
      usage: { inputTokens: 10, outputTokens: 0 },
    });
    expect(second.model).toBe('other');
    expect(model.calls).toHaveLength(2);
    expect(model.calls[0]!.messages).toHaveLength(1);
    expect([model.provider, model.model]).toEqual(['scripted', 'scripted']);
  });

  it('throws scripted errors as they are, raw errors included', async () => {
    const keelError = new KeelError('provider.overloaded', 'busy');
    const raw = new TypeError('fetch failed');
    const model = scriptedModel([keelError, raw, { content: 'ok' }]);
    await expect(model.generate(request())).rejects.toBe(keelError);
    await expect(model.generate(request())).rejects.toBe(raw);
    await expect(model.generate(request())).resolves.toMatchObject({ content: 'ok' });
  });

  it('calls function steps with the request and call index', async () => {
    const model = scriptedModel((received, callIndex) =>
      callIndex === 1
        ? new KeelError('provider.rate_limited', 'slow down')
        : { content: `${received.messages.length}:${callIndex}` },
    );
    expect((await model.generate(request())).content).toBe('1:0');
    await expect(model.generate(request())).rejects.toMatchObject({ code: 'provider.rate_limited' });
    expect((await model.generate(request())).content).toBe('1:2');
    const mixed = scriptedModel([async () => ({ content: 'async' })]);
    expect((await mixed.generate(request())).content).toBe('async');
  });

  it('fails with config.invalid past the end of the script', async () => {
    const model = scriptedModel([{ content: 'only' }]);
    await model.generate(request());
    await expect(model.generate(request())).rejects.toMatchObject({ code: 'config.invalid' });
    expect(() => scriptedModel('nope' as never)).toThrow(KeelError);
  });

  it('streams content to onTextDelta, in the scripted pieces when given', async () => {
    const deltas: string[] = [];
    const model = scriptedModel([{ content: 'Hello' }, { content: 'Hello', textDeltas: ['He', 'llo'] }, {}]);
    const onTextDelta = (delta: string) => deltas.push(delta);
    await model.generate(request({ onTextDelta }));
    await model.generate(request({ onTextDelta }));
    await model.generate(request({ onTextDelta }));
    expect(deltas).toEqual(['Hello', 'He', 'llo']);
  });

  it('rejects with the abort reason: before the call, while a step is pending, and between deltas', async () => {
    const before = new AbortController();
    const reason = new Error('cancelled');
    before.abort(reason);
    await expect(scriptedModel([{ content: 'x' }]).generate(request({ signal: before.signal }))).rejects.toBe(
      reason,
    );

    const during = new AbortController();
    const hanging = scriptedModel([() => new Promise(() => undefined)]);
    const pending = hanging.generate(request({ signal: during.signal }));
    during.abort(reason);
    await expect(pending).rejects.toBe(reason);

    const streaming = new AbortController();
    const deltas: string[] = [];
    const model = scriptedModel([{ content: 'ab', textDeltas: ['a', 'b'] }]);
    const onTextDelta = (delta: string) => {
      deltas.push(delta);
      streaming.abort(reason);
    };
    await expect(model.generate(request({ signal: streaming.signal, onTextDelta }))).rejects.toBe(reason);
    expect(deltas).toEqual(['a']);
  });
});
