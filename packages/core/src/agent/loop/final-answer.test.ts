import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../spec/run-events.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { agent } from '../agent.js';
import { structuredOutput } from '../correction/structured-output.js';
import { guardrail } from '../guardrails/guardrail.js';
import { tool } from '../tools/tool.js';
import { CONTINUE_PROMPT } from './final-answer.js';

const verdictSchema = {
  type: 'object',
  properties: { approved: { type: 'boolean' }, reason: { type: 'string' } },
  required: ['approved', 'reason'],
  additionalProperties: false,
} as const;

describe('final answer: output token limit', () => {
  it('fails hard on a cut answer, with the partial output', async () => {
    const model = scriptedModel([{ content: 'The first half of', finishReason: 'length' }]);
    const result = await agent({ model }).run('write an essay');
    expect(result.status).toBe('failed');
    expect(result.stopReason).toBe('max_tokens');
    expect(result.error?.code).toBe('provider.max_tokens');
    expect(result.error?.data.partialOutput).toBe('The first half of');
    expect(result.output).toBeUndefined();
  });

  it("asks the model to continue with onMaxTokens: 'continue', and joins the parts", async () => {
    const model = scriptedModel([
      { content: 'The first half', finishReason: 'length' },
      { content: ' and the second.' },
    ]);
    const result = await agent({ model, onMaxTokens: 'continue' }).run('write');
    expect(result.status).toBe('completed');
    expect(result.output).toBe('The first half and the second.');
    expect(model.calls[1]!.messages.at(-1)).toEqual({ role: 'user', content: CONTINUE_PROMPT });
    expect(result.report.corrections.byKind).toEqual({ continue_output: 1 });
  });

  it('bounds the continuations, then fails with everything gathered', async () => {
    const model = scriptedModel(() => ({ content: 'more', finishReason: 'length' }));
    const result = await agent({ model, onMaxTokens: 'continue', limits: { maxContinuations: 2 } }).run(
      'write',
    );
    expect(result.error?.code).toBe('provider.max_tokens');
    expect(result.error?.data).toMatchObject({ partialOutput: 'moremoremore', continuations: 2 });
    expect(model.calls).toHaveLength(3);
  });

  it('fails on tool calls cut at the limit rather than running half a request', async () => {
    let calls = 0;
    const noop = tool({ name: 'noop', description: 'x', input: { type: 'object' }, execute: () => calls++ });
    const model = scriptedModel([
      { toolCalls: [{ name: 'noop', arguments: '{"a":' }], finishReason: 'length' },
    ]);
    const result = await agent({ model, tools: [noop] }).run('go');
    expect(result.error?.code).toBe('provider.max_tokens');
    expect(calls).toBe(0);
  });

  it('fails when the provider filtered the answer', async () => {
    const model = scriptedModel([{ content: '', finishReason: 'content_filter' }]);
    const result = await agent({ model }).run('hi');
    expect(result.error?.code).toBe('provider.content_filter');
  });
});

describe('final answer: structured output', () => {
  it('sends validation errors back to the model and returns the valid value', async () => {
    const model = scriptedModel([
      { content: 'Sure! approved' },
      { content: '{"approved": "yes", "reason": "ok"}' },
      { content: '```json\n{"approved": true, "reason": "fits policy"}\n```' },
    ]);
    const events: RunEvent[] = [];
    const result = await agent({ model, outputSchema: verdictSchema }).run('review', {
      onEvent: (event) => events.push(event),
    });

    expect(result.status).toBe('completed');
    expect(result.output).toEqual({ approved: true, reason: 'fits policy' });
    expect(model.calls[0]!.outputSchema).toEqual({ name: 'output', schema: verdictSchema });
    expect(model.calls[1]!.messages.at(-1)?.content).toContain('not valid JSON');
    expect(model.calls[2]!.messages.at(-1)?.content).toContain('$.approved');
    expect(result.report.corrections.byKind).toEqual({ invalid_output: 2 });
    expect(result.report.errors.byCode).toEqual({ 'output.invalid': 2 });
    expect(events.filter((event) => event.type === 'correction')).toHaveLength(2);
  });

  it('fails with output.invalid once the corrections are spent', async () => {
    const model = scriptedModel(() => ({ content: '{"approved": 1}' }));
    const result = await agent({
      model,
      outputSchema: structuredOutput({ schema: verdictSchema, name: 'verdict' }),
      limits: { maxOutputCorrections: 1 },
    }).run('review');
    expect(result.status).toBe('failed');
    expect(result.stopReason).toBe('output_invalid');
    expect(result.error?.code).toBe('output.invalid');
    expect(model.calls).toHaveLength(2);
    expect(model.calls[0]!.outputSchema?.name).toBe('verdict');
  });
});

describe('final answer: guardrails', () => {
  const noSecrets = guardrail({
    name: 'no-secrets',
    stage: 'input',
    check: (text) =>
      text.includes('password')
        ? { action: 'block', trigger: 'input_not_allowed', message: 'Do not share passwords.' }
        : { action: 'allow' },
  });
  const maskEmails = guardrail({
    name: 'mask-emails',
    stage: 'output',
    check: (text) =>
      text.includes('@')
        ? { action: 'redact', trigger: 'pii_detected', text: text.replace(/\S+@\S+/g, '[email]') }
        : { action: 'allow' },
  });
  const noRefunds = guardrail({
    name: 'no-refunds',
    stage: 'output',
    check: (text) =>
      text.includes('refund')
        ? { action: 'block', trigger: 'output_not_allowed', message: 'No refunds.' }
        : { action: 'allow' },
  });

  it('blocks input before the first model call with guardrail.input', async () => {
    const model = scriptedModel([{ content: 'never' }]);
    const events: RunEvent[] = [];
    const result = await agent({ model, guardrails: [noSecrets] }).run('my password is hunter2', {
      onEvent: (event) => events.push(event),
    });
    expect(result.status).toBe('failed');
    expect(result.stopReason).toBe('guardrail');
    expect(result.error?.code).toBe('guardrail.input');
    expect(model.calls).toHaveLength(0);
    expect(result.report.guardrailsTripped).toBe(1);
    expect(events.filter((event) => event.type === 'guardrail-tripped')).toMatchObject([
      { stage: 'input', guardrail: 'no-secrets', action: 'block', trigger: 'input_not_allowed' },
    ]);
  });

  it('redacts output before completion, in the output and the conversation', async () => {
    const model = scriptedModel([{ content: 'Write to ann@example.com.' }]);
    const result = await agent({ model, guardrails: [maskEmails] }).run('contact?');
    expect(result.status).toBe('completed');
    expect(result.output).toBe('Write to [email]');
    expect(result.messages.at(-1)).toEqual({ role: 'assistant', content: 'Write to [email]' });
  });

  it('withholds blocked output with guardrail.output', async () => {
    const model = scriptedModel([{ content: 'I will refund you.' }]);
    const result = await agent({ model, guardrails: [noRefunds] }).run('money back?');
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('guardrail.output');
    expect(result.output).toBeUndefined();
  });

  it('refuses a tool call before it runs, and tells the model as data', async () => {
    let calls = 0;
    const remove = tool({
      name: 'delete_all',
      description: 'deletes',
      input: { type: 'object' },
      execute: () => calls++,
    });
    const noDeletes = guardrail({
      name: 'no-deletes',
      stage: 'tool-call',
      check: (call) =>
        call.name.startsWith('delete')
          ? { action: 'block', trigger: 'input_not_allowed', message: 'Deleting is not allowed.' }
          : { action: 'allow' },
    });
    const model = scriptedModel([{ toolCalls: [{ name: 'delete_all' }] }, { content: 'I cannot delete.' }]);
    const result = await agent({ model, tools: [remove], guardrails: [noDeletes] }).run('clean up');
    expect(result.status).toBe('completed');
    expect(calls).toBe(0);
    const toolMessage = JSON.parse(model.calls[1]!.messages.at(-1)!.content);
    expect(toolMessage).toMatchObject({ status: 'error', error: { code: 'tool.permission_denied' } });
    expect(toolMessage.guidance).toContain('Do not repeat it');
    expect(result.report.guardrailsTripped).toBe(1);
  });
});
