import { describe, expect, it } from 'vitest';
import { KeelError } from '../../errors/keel-error.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { agent } from '../agent.js';
import { tool } from './tool.js';

const lookup = tool({
  name: 'lookup',
  description: 'Looks a word up',
  input: { type: 'object', properties: { word: { type: 'string' } } },
  idempotent: true,
  execute: () => ({ found: true }),
});

function twoSteps() {
  return scriptedModel([
    { toolCalls: [{ name: 'lookup', arguments: { word: 'keel' } }] },
    { content: 'done' },
  ]);
}

describe('toolChoice', () => {
  it("sends the agent's choice, then auto once the model called a tool, so that the run can end", async () => {
    const model = twoSteps();
    const result = await agent({ model, tools: [lookup], toolChoice: { name: 'lookup' } }).run('Define keel');
    expect(result.status).toBe('completed');
    expect(model.calls.map((call) => call.toolChoice)).toEqual([{ name: 'lookup' }, 'auto']);
  });

  it("a run's own choice overrides the agent's, and is kept in the run state", async () => {
    const model = twoSteps();
    const result = await agent({ model, tools: [lookup], toolChoice: 'none' }).run('Define keel', {
      toolChoice: 'required',
    });
    expect(model.calls.map((call) => call.toolChoice)).toEqual(['required', 'auto']);
    expect(result.state.toolChoice).toBe('auto');
  });

  it('keeps a choice that forces nothing for every step', async () => {
    const model = twoSteps();
    await agent({ model, tools: [lookup], toolChoice: 'auto' }).run('Define keel');
    expect(model.calls.map((call) => call.toolChoice)).toEqual(['auto', 'auto']);
    const unset = twoSteps();
    await agent({ model: unset, tools: [lookup] }).run('Define keel');
    expect(unset.calls.map((call) => call.toolChoice)).toEqual([undefined, undefined]);
  });

  it('refuses an unknown tool name, a bad value, or required without tools, with config.invalid', async () => {
    const model = twoSteps();
    const refusal = (make: () => unknown) => {
      try {
        make();
      } catch (error) {
        expect(KeelError.isInstance(error) && error.code).toBe('config.invalid');
        return (error as Error).message;
      }
      throw new Error('not refused');
    };
    expect(refusal(() => agent({ model, tools: [lookup], toolChoice: { name: 'search' } }))).toContain(
      'toolChoice names the unknown tool "search" (its tools: lookup)',
    );
    expect(refusal(() => agent({ model, toolChoice: 'required' }))).toContain('needs a tool');
    expect(refusal(() => agent({ model, tools: [lookup], toolChoice: 'always' as never }))).toContain(
      "toolChoice must be 'auto', 'none', 'required' or { name: '<tool>' }",
    );
    await expect(
      agent({ model, tools: [lookup] }).run('Hi', { toolChoice: { name: 'search' } }),
    ).rejects.toMatchObject({ code: 'config.invalid' });
    expect(model.calls).toHaveLength(0);
  });
});
