// Tool sources in `agent({ tools })`: read before each model step, listed again only when their version moved.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KeelError } from '../errors/keel-error.js';
import type { Tool, ToolSource } from '../spec/tool.js';
import { MemoryRunStore } from '../store/memory-run-store.js';
import { FakeClock } from '../testing/fake-clock.js';
import { FaultyRunStore } from '../testing/faulty-run-store.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { agent } from './agent.js';
import { tool } from './tools/tool.js';

const START_MS = 1_700_000_000_000;
const empty = { type: 'object', properties: {}, additionalProperties: false } as const;

function named(name: string, execute: () => unknown = () => name, idempotent = true): Tool {
  return tool({ name, description: `The ${name} tool`, input: empty, idempotent, execute });
}

/** A source whose tools the test sets; it counts its listings. */
class TestSource implements ToolSource {
  version = 0;
  current: readonly Tool[] = [];
  listings = 0;
  failure: Error | undefined;
  private next: readonly Tool[];

  constructor(tools: readonly Tool[]) {
    this.next = tools;
  }

  /** Changes the tools, as a server's `tools/list_changed` would: listed at the next `tools()`. */
  set(tools: readonly Tool[]): void {
    this.next = tools;
    this.version++;
  }

  async tools(): Promise<readonly Tool[]> {
    this.listings++;
    if (this.failure !== undefined) throw this.failure;
    this.current = this.next;
    return this.current;
  }
}

const offered = (request: { tools?: readonly { name: string }[] | undefined }) =>
  (request.tools ?? []).map((definition) => definition.name);

afterEach(() => vi.restoreAllMocks());

describe('agent: tool sources', () => {
  it('offers a tool the source adds at the next step, and no longer offers one it removes', async () => {
    const source = new TestSource([]);
    const extra = named('extra');
    source.set([named('add', () => source.set([...source.current, extra]))]);
    const model = scriptedModel([
      { toolCalls: [{ name: 'add' }] },
      { toolCalls: [{ name: 'extra' }] },
      { toolCalls: [{ name: 'remove' }] },
      { toolCalls: [{ name: 'extra' }] },
      { content: 'done' },
    ]);
    const remove = named('remove', () => source.set([named('add')]));
    const assistant = agent({ model, tools: [remove, source], clock: new FakeClock() });

    const result = await assistant.run('go');

    expect(result.status).toBe('completed');
    expect(model.calls.map(offered)).toEqual([
      ['remove', 'add'],
      ['remove', 'add', 'extra'],
      ['remove', 'add', 'extra'],
      ['remove', 'add'],
      ['remove', 'add'],
    ]);
    const results = result.messages.filter((message) => message.role === 'tool').map((m) => m.content);
    expect(JSON.parse(results[1]!)).toEqual({ status: 'success', content: 'extra' });
    // The removed tool is an unknown tool now: the model is told so, as data.
    expect(JSON.parse(results[3]!)).toMatchObject({ status: 'error', error: { code: 'tool.not_found' } });
  });

  it('lists a source once while its version stays, however many steps and runs', async () => {
    const source = new TestSource([named('a')]);
    const model = scriptedModel([
      { toolCalls: [{ name: 'a' }] },
      { toolCalls: [{ name: 'a' }] },
      { content: 'one' },
      { content: 'two' },
    ]);
    const assistant = agent({ model, tools: [source], clock: new FakeClock() });
    await assistant.run('first');
    await assistant.run('second');
    expect(source.listings).toBe(1);
    expect(model.calls.map(offered)).toEqual([['a'], ['a'], ['a'], ['a']]);
  });

  it('keeps the slot (and breaker) of a tool that stays across updates, and adds the breakers of new tools', async () => {
    const kept = named('kept');
    const source = new TestSource([kept]);
    const model = scriptedModel([{ toolCalls: [{ name: 'kept' }] }, { content: 'a' }, { content: 'b' }]);
    const assistant = agent({ model, tools: [source], clock: new FakeClock() });
    await assistant.run('first');
    const breaker = assistant.breakers.get('tool:kept');
    expect(breaker).toBeDefined();
    source.set([kept, named('added')]);
    await assistant.run('second');
    expect(assistant.breakers.get('tool:kept')).toBe(breaker);
    expect(assistant.breakers.has('tool:added')).toBe(true);
  });

  it('fails the run with the error of a source that cannot list at all', async () => {
    const source = new TestSource([named('a')]);
    source.failure = new KeelError('tool.unavailable', 'the server did not start');
    const model = scriptedModel([{ content: 'never asked' }]);
    const result = await agent({ model, tools: [source], clock: new FakeClock() }).run('go');
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('tool.unavailable');
    expect(model.calls).toHaveLength(0);
  });

  it('keeps the last list of a source that fails to list again, and asks it again at the next step', async () => {
    const source = new TestSource([named('a')]);
    const model = scriptedModel([
      { toolCalls: [{ name: 'break' }] },
      { toolCalls: [{ name: 'a' }] },
      { content: 'done' },
    ]);
    const breaking = named('break', () => {
      source.failure = new Error('listing failed');
      source.set([named('b')]);
      return 'broken';
    });
    const result = await agent({ model, tools: [breaking, source], clock: new FakeClock() }).run('go');
    expect(result.status).toBe('completed');
    expect(model.calls.map(offered)).toEqual([
      ['break', 'a'],
      ['break', 'a'],
      ['break', 'a'],
    ]);
    // Listed before the first step, then tried (and failed) before each later step.
    expect(source.listings).toBe(3);
    const outcome = JSON.parse(result.messages.filter((message) => message.role === 'tool')[1]!.content);
    expect(outcome).toEqual({ status: 'success', content: 'a' });
  });

  it('offers the first of two tools with one name, and warns once', async () => {
    const warning = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const source = new TestSource([named('same', () => 'from the source'), named('other')]);
    const model = scriptedModel([{ toolCalls: [{ name: 'same' }] }, { content: 'done' }]);
    const result = await agent({
      model,
      tools: [named('same', () => 'plain'), source],
      clock: new FakeClock(),
    }).run('go');
    expect(model.calls.map(offered)[0]).toEqual(['same', 'other']);
    const toolMessage = result.messages.find((message) => message.role === 'tool');
    expect(JSON.parse(toolMessage!.content)).toEqual({ status: 'success', content: 'plain' });
    expect(warning).toHaveBeenCalledTimes(1);
    expect(String(warning.mock.calls[0]![0])).toMatch(/two tools are named "same"/);
  });

  it('lists the sources before resuming, so that a call that may have run is judged by its own tool', async () => {
    const store = new MemoryRunStore();
    const faulty = new FaultyRunStore(store);
    let executions = 0;
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const lookup = (hold: boolean) =>
      named('lookup', async () => {
        executions++;
        if (hold) {
          entered();
          await held;
        }
        return 'found';
      });
    const script = () =>
      scriptedModel((request) =>
        request.messages.some((message) => message.role === 'tool')
          ? { content: 'done' }
          : { toolCalls: [{ name: 'lookup' }] },
      );
    const first = agent({
      name: 'finder',
      model: script(),
      tools: [new TestSource([lookup(true)])],
      store: faulty,
      clock: new FakeClock(START_MS),
      durability: { storeMaxAttempts: 1, owner: 'first' },
    });
    const running = first.run('go', { runId: 'run-1' });
    await inside;
    faulty.down = true; // the process dies inside the call: the ledger says started, never completed
    release();
    expect((await running).stopReason).toBe('store_unavailable');

    const source = new TestSource([lookup(false)]);
    const second = agent({
      name: 'finder',
      model: script(),
      tools: [source],
      store,
      clock: new FakeClock(START_MS + 60_000),
      durability: { storeMaxAttempts: 1, owner: 'second' },
    });
    const resumed = await second.resume('run-1');
    // An idempotent tool runs again; without its source listed, the call would wait for a decision instead.
    expect(resumed).toMatchObject({ status: 'completed', output: 'done' });
    expect(source.listings).toBe(1);
    expect(executions).toBe(2);
  });

  it('refuses an entry that is neither a tool nor a source', () => {
    expect(() =>
      agent({ model: scriptedModel([]), tools: [{ tools: () => [] } as unknown as Tool] }),
    ).toThrow(/tools\[0\] is neither a tool nor a tool source/);
  });
});
