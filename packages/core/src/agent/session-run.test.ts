import { describe, expect, it } from 'vitest';
import { KeelError } from '../errors/keel-error.js';
import type { Message } from '../spec/model.js';
import type { RunStore } from '../spec/run-store.js';
import { MemoryRunStore } from '../store/memory-run-store.js';
import { FakeClock } from '../testing/fake-clock.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { SESSION_START_MS, SessionFixture } from '../testing/session-fixture.js';
import { agent } from './agent.js';
import { slidingWindow } from './conversation/sliding-window.js';
import { SUMMARY_PREFIX, summarizing } from './conversation/summarizing.js';
import { tool } from './tools/tool.js';

async function rejection(promise: Promise<unknown>): Promise<KeelError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!KeelError.isInstance(error)) throw new Error(`expected a KeelError, got ${String(error)}`);
  return error;
}

describe('runs on sessions', () => {
  it('checks the session options before anything runs', async () => {
    const store = new MemoryRunStore();
    const assistant = new SessionFixture().agent(store, { owner: 'a' });
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ sessionId: '' }, /sessionId must be 1 to 128 characters .* not ""/],
      [{ sessionId: 'a'.repeat(129) }, /sessionId must be 1 to 128 characters/],
      [{ sessionId: 'has space' }, /letters, digits and \. _ : @ -/],
      [{ sessionId: '../etc' }, /starting with a letter or a digit/],
      [{ sessionId: 42 }, /not 42/],
      [{ sessionId: 'ok', sessionBusy: 'later' }, /sessionBusy must be "wait" or "fail", not "later"/],
      [{ sessionId: 'ok', sessionWaitMs: -1 }, /sessionWaitMs must be an integer from 0 to 3600000/],
      [{ sessionId: 'ok', sessionWaitMs: 1.5 }, /sessionWaitMs must be an integer/],
      [{ sessionBusy: 'fail' }, /sessionBusy and sessionWaitMs need a sessionId/],
      [{ sessionId: 'ok', sesionBusy: 'fail' }, /unknown option "sesionBusy"/],
    ];
    for (const [options, message] of cases) {
      const error = await rejection(assistant.run('hello', options as never));
      expect(error.code, JSON.stringify(options)).toBe('config.invalid');
      expect(error.message, JSON.stringify(options)).toMatch(message);
    }
    const longest = 'user-42:support@example.com_'.padEnd(128, 'x');
    expect((await assistant.run('hello', { sessionId: longest })).session?.outcome).toBe('saved');
    const system = await rejection(
      assistant.run([{ role: 'system', content: 'Be rude' }], { sessionId: 'ok' }),
    );
    expect(system.message).toMatch(/system message is the agent's instructions/);
    expect(await store.listSessions()).toHaveLength(1);
  });

  it('needs a store that keeps sessions', async () => {
    const model = scriptedModel([{ content: 'hi' }]);
    const storeless = await rejection(agent({ model }).run('hello', { sessionId: 'chat-1' }));
    expect(storeless).toMatchObject({ code: 'config.invalid' });
    expect(storeless.message).toMatch(/a run on a session needs a store/);
    const legacy = new MemoryRunStore() as unknown as Record<string, unknown>;
    legacy.loadSession = undefined;
    const old = await rejection(
      agent({ model, store: legacy as unknown as RunStore }).run('hello', { sessionId: 'chat-1' }),
    );
    expect(old.message).toMatch(/does not keep sessions \(missing: loadSession\)/);
  });

  it('leaves runs on no session without a session outcome', async () => {
    const result = await new SessionFixture().agent(new MemoryRunStore(), { owner: 'a' }).run('hello');
    expect(result.status).toBe('completed');
    expect(result).not.toHaveProperty('session');
    expect(result.state).not.toHaveProperty('session');
  });

  it('sends the model a history bounded by the conversation manager, while the session keeps it all', async () => {
    const store = new MemoryRunStore();
    const fixture = new SessionFixture();
    const assistant = fixture.agent(store, {
      owner: 'a',
      conversationManager: slidingWindow({ maxMessages: 4 }),
    });
    for (let index = 0; index < 5; index++) await assistant.run(`note ${index}`, { sessionId: 'bounded' });
    const recalled = await assistant.run('recall', { sessionId: 'bounded' });
    // The first question stays (the task), then the most recent messages: at most 4 of the 10.
    expect(recalled.output).toBe('you said: note 0 | note 4');
    const sent = fixture.requests.at(-1)!;
    expect(sent.map((message) => message.content)).toEqual([
      'You remember what the user said.',
      'note 0',
      'noted: note 3',
      'note 4',
      'noted: note 4',
      'recall',
    ]);
    const session = await store.loadSession('bounded');
    expect(session?.messageCount).toBe(12);
    expect(session?.turns.map((turn) => (turn.messages[0] as Message).content)).toEqual([
      'note 0',
      'note 1',
      'note 2',
      'note 3',
      'note 4',
      'recall',
    ]);
  });

  it("keeps the run's own messages in the session when a context overflow reduces the conversation", async () => {
    for (const manager of [
      slidingWindow({ maxMessages: 40 }),
      summarizing({ summarize: async () => 'they talked', keepRecent: 2 }),
    ]) {
      const store = new MemoryRunStore();
      const sent: Message[][] = [];
      // Overflows past 7 messages; asks for the weather of two cities, one after the other, then answers.
      const model = scriptedModel((request) => {
        sent.push([...request.messages]);
        if (request.messages.length > 7)
          return new KeelError('provider.context_overflow', 'too long for the context window');
        const last = request.messages.at(-1)!;
        if (last.role === 'user' && last.content.startsWith('weather'))
          return { toolCalls: [{ name: 'lookup', arguments: { city: 'Paris' } }] };
        if (last.role === 'tool' && last.content.includes('Paris'))
          return { toolCalls: [{ name: 'lookup', arguments: { city: 'Oslo' } }] };
        if (last.role === 'tool') return { content: 'Paris and Oslo are sunny' };
        return { content: `noted: ${last.content}` };
      });
      const lookup = tool({
        name: 'lookup',
        description: 'Weather for a city',
        input: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } as const,
        execute: ({ city }: { city: string }) => `${city}: sunny`,
      });
      const assistant = agent({
        model,
        tools: [lookup],
        store,
        instructions: 'Be brief.',
        conversationManager: manager,
        clock: new FakeClock(SESSION_START_MS),
      });
      await assistant.run('I am Ana', { sessionId: 'long' });
      await assistant.run('I live in Lyon', { sessionId: 'long' });
      const result = await assistant.run('weather in two cities', { sessionId: 'long' });
      expect(result, manager.name).toMatchObject({ status: 'completed', output: 'Paris and Oslo are sunny' });
      expect(result.report.contextReductions, manager.name).toBeGreaterThan(0);
      // The model answered on a reduced conversation.
      expect(sent.at(-1)!.length).toBeLessThanOrEqual(7);
      const session = await store.loadSession('long');
      const turn = (session?.turns[2]?.messages ?? []) as Message[];
      expect(
        turn.map((message) => `${message.role}:${message.content}`),
        manager.name,
      ).toEqual([
        'user:weather in two cities',
        'assistant:',
        'tool:{"status":"success","content":"Paris: sunny"}',
        'assistant:',
        'tool:{"status":"success","content":"Oslo: sunny"}',
        'assistant:Paris and Oslo are sunny',
      ]);
      const all = session!.turns.flatMap((entry) => entry.messages as Message[]);
      expect(all.some((message) => message.content.startsWith(SUMMARY_PREFIX))).toBe(false);
      expect(all.slice(0, 4).map((message) => message.content)).toEqual([
        'I am Ana',
        'noted: I am Ana',
        'I live in Lyon',
        'noted: I live in Lyon',
      ]);
    }
  });

  it('gives up waiting for a busy session when its signal aborts', async () => {
    const store = new MemoryRunStore();
    const fixture = new SessionFixture();
    const clock = new FakeClock(SESSION_START_MS);
    const assistant = fixture.agent(store, { owner: 'a', clock });
    const gate = fixture.gate('Oslo');
    const first = assistant.run('weather Oslo', { sessionId: 'busy' });
    await gate.entered;
    const controller = new AbortController();
    const waiting = rejection(assistant.run('recall', { sessionId: 'busy', signal: controller.signal }));
    await clock.advance(500);
    controller.abort(new Error('the user left'));
    const error = await waiting;
    expect(error).toMatchObject({ code: 'run.cancelled', data: { sessionId: 'busy' } });
    expect(error.message).toMatch(/while it waited for session busy/);
    gate.release();
    expect((await first).session?.outcome).toBe('saved');
    expect((await store.loadSession('busy'))?.version).toBe(1);
  });
});
