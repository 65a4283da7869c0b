import { describe, expect, it } from 'vitest';
import type { ModelProvider, ModelRequest, ModelResponse } from '../spec/model.js';
import { agent } from './agent.js';
import { tool } from './tool.js';

function fastModel(steps: number): ModelProvider {
  return {
    provider: 'bench',
    model: 'bench',
    async generate(request: ModelRequest): Promise<ModelResponse> {
      const turn = request.messages.filter((m) => m.role === 'assistant').length;
      if (turn < steps) {
        return { content: '', toolCalls: [{ id: `c${turn}`, name: 'add', arguments: '{"a":1,"b":2}' }], finishReason: 'tool_calls', usage: { inputTokens: 1, outputTokens: 1 }, model: 'bench' };
      }
      return { content: 'done', toolCalls: [], finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1 }, model: 'bench' };
    },
  };
}

describe('bench', () => {
  it('per step overhead', async () => {
    const add = tool({ name: 'add', description: 'add', input: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] }, execute: ({ a, b }: { a: number; b: number }) => a + b });
    const steps = 10;
    const a = agent({ model: fastModel(steps), tools: [add], limits: { maxTurns: 50 } });
    for (let i = 0; i < 300; i++) await a.run('go');
    const runs = 2000;
    const cpu = process.cpuUsage();
    const start = performance.now();
    for (let i = 0; i < runs; i++) {
      const r = await a.run('go');
      if (r.status !== 'completed') throw new Error(JSON.stringify(r.error));
    }
    const elapsed = performance.now() - start;
    const used = process.cpuUsage(cpu);
    console.log('cpu us per step', (used.user + used.system) / (runs * (steps + 1)));
    console.log('us per step', (elapsed * 1000) / (runs * (steps + 1)));
  });
  it('baseline', async () => {
    const add = tool({ name: 'add', description: 'add', input: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] }, execute: ({ a, b }: { a: number; b: number }) => a + b });
    const steps = 10;
    const model = fastModel(steps);
    const once = async () => {
      const messages: any[] = [{ role: 'user', content: 'go' }];
      for (;;) {
        const response = await model.generate({ messages, signal: new AbortController().signal });
        messages.push({ role: 'assistant', content: response.content, toolCalls: response.toolCalls });
        if (response.toolCalls.length === 0) return;
        for (const call of response.toolCalls) {
          const input = JSON.parse(call.arguments);
          const valid = await add.validate(input);
          if (!valid.success) throw new Error('x');
          const out = await add.execute(valid.value, {} as never);
          messages.push({ role: 'tool', toolCallId: call.id, toolName: call.name, content: JSON.stringify({ status: 'success', content: out }) });
        }
      }
    };
    for (let i = 0; i < 300; i++) await once();
    const runs = 2000;
    const cpu = process.cpuUsage();
    const start = performance.now();
    for (let i = 0; i < runs; i++) await once();
    const elapsed = performance.now() - start;
    const used = process.cpuUsage(cpu);
    console.log('baseline cpu us per step', (used.user + used.system) / (runs * (steps + 1)));
    console.log('baseline us per step', (elapsed * 1000) / (runs * (steps + 1)));
  });
  it('memory', async () => {
    const add = tool({ name: 'add', description: 'add', input: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] }, execute: ({ a, b }: { a: number; b: number }) => a + b });
    // concurrency memory
    const hanging: ModelProvider = { provider: 'h', model: 'h', generate: (request) => new Promise((_, reject) => request.signal.addEventListener('abort', () => reject(request.signal.reason))) };
    const b = agent({ model: hanging, tools: [add] });
    globalThis.gc?.();
    const before = process.memoryUsage().heapUsed;
    const controller = new AbortController();
    const pending = [];
    for (let i = 0; i < 10000; i++) pending.push(b.run('go', { signal: controller.signal }));
    await new Promise((r) => setTimeout(r, 50));
    globalThis.gc?.();
    const after = process.memoryUsage().heapUsed;
    console.log('bytes per waiting run', (after - before) / 10000);
    controller.abort();
    const results = await Promise.all(pending);
    expect(results.every((r) => r.status === 'cancelled')).toBe(true);
  });
});
