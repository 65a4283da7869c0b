import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../testing/fake-clock.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { agent } from '../agent.js';
import { tool } from './tool.js';

/** A fake clock that counts the timers set for `delayMs`. */
class CountingClock extends FakeClock {
  readonly delays: number[] = [];
  override setTimeout(callback: () => void, delayMs: number): unknown {
    this.delays.push(delayMs);
    return super.setTimeout(callback, delayMs);
  }
}

const TOOL_TIMEOUT_MS = 7_777;

async function timersForToolDeadline(execute: () => unknown): Promise<number> {
  const clock = new CountingClock();
  const lookup = tool({
    name: 'lookup',
    description: 'Looks a key up',
    input: { type: 'object', properties: {} },
    timeoutMs: TOOL_TIMEOUT_MS,
    execute,
  });
  const model = scriptedModel([{ toolCalls: [{ name: 'lookup', arguments: {} }] }, { content: 'done' }]);
  const result = await clock.runUntilSettled(agent({ model, tools: [lookup], clock }).run('go'));
  expect(result.status).toBe('completed');
  expect(result.messages.find((message) => message.role === 'tool')?.content).toContain('"value":1');
  return clock.delays.filter((delayMs) => delayMs === TOOL_TIMEOUT_MS).length;
}

describe('a tool call under its timeout', () => {
  it('arms no deadline when the tool answers synchronously (it has already finished)', async () => {
    expect(await timersForToolDeadline(() => ({ value: 1 }))).toBe(0);
  });

  it('keeps its deadline when the tool answers later', async () => {
    expect(await timersForToolDeadline(async () => ({ value: 1 }))).toBe(1);
  });
});
