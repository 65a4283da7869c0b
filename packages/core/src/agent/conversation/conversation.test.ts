import { describe, expect, it } from 'vitest';
import type { Message } from '../../spec/model.js';
import { noReduction } from './manager.js';
import { slidingWindow } from './sliding-window.js';
import { SUMMARY_PREFIX, summarizing } from './summarizing.js';

const overflow = (attempt = 1) => ({ reason: 'context_overflow' as const, attempt });

const system: Message = { role: 'system', content: 'You are helpful.' };
const task: Message = { role: 'user', content: 'Plan my trip.' };

/** An exchange: the model calls `count` tools, each answered. */
function exchange(label: string, count = 1): Message[] {
  const toolCalls = Array.from({ length: count }, (_, index) => ({
    id: `${label}-${index}`,
    name: 'search',
    arguments: '{}',
  }));
  return [
    { role: 'assistant', content: '', toolCalls },
    ...toolCalls.map(
      (call): Message => ({
        role: 'tool',
        toolCallId: call.id,
        toolName: 'search',
        content: `result ${call.id}`,
      }),
    ),
  ];
}

/** Every tool result follows the assistant message that called it, and every call has its result. */
function expectPaired(messages: readonly Message[]): void {
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    if (message.role === 'tool') {
      const owner = messages
        .slice(0, index)
        .reverse()
        .find((other) => other.role === 'assistant' && other.toolCalls?.length);
      expect(
        owner?.role === 'assistant' && owner.toolCalls?.some((call) => call.id === message.toolCallId),
      ).toBe(true);
    }
    if (message.role === 'assistant' && message.toolCalls) {
      for (const call of message.toolCalls) {
        expect(messages.some((other) => other.role === 'tool' && other.toolCallId === call.id)).toBe(true);
      }
    }
  }
}

describe('slidingWindow', () => {
  it('drops the oldest exchanges down to maxMessages, keeping system, task and the latest exchange', async () => {
    const messages: Message[] = [
      system,
      task,
      ...exchange('a', 2),
      ...exchange('b'),
      ...exchange('c'),
      ...exchange('d'),
    ];
    expect(messages).toHaveLength(11);
    const { messages: kept, reduced } = await slidingWindow({ maxMessages: 6 }).reduce(messages, overflow());
    expect(reduced).toBe(true);
    expect(kept).toEqual([system, task, ...exchange('c'), ...exchange('d')]);
    expectPaired(kept);
  });

  it('never splits a call from its results, even when that leaves it over the limit', async () => {
    const messages: Message[] = [system, task, ...exchange('a', 5), ...exchange('b', 5)];
    const { messages: kept } = await slidingWindow({ maxMessages: 5 }).reduce(messages, overflow());
    expect(kept).toEqual([system, task, ...exchange('b', 5)]);
    expectPaired(kept);
  });

  it('halves a conversation already within the window', async () => {
    const messages: Message[] = [
      system,
      task,
      ...exchange('a'),
      ...exchange('b'),
      ...exchange('c'),
      ...exchange('d'),
    ];
    const { messages: kept, reduced } = await slidingWindow({ maxMessages: 40 }).reduce(messages, overflow());
    expect(reduced).toBe(true);
    // 10 messages become at most 5: whole exchanges go until they fit.
    expect(kept).toEqual([system, task, ...exchange('d')]);
  });

  it('keeps the latest user message of a multi-turn conversation', async () => {
    const followUp: Message = { role: 'user', content: 'Now book the hotel.' };
    const messages: Message[] = [
      system,
      task,
      ...exchange('a'),
      { role: 'assistant', content: 'Done.' },
      followUp,
      ...exchange('b'),
    ];
    const { messages: kept } = await slidingWindow({ maxMessages: 4 }).reduce(messages, overflow());
    expect(kept).toEqual([system, task, followUp, ...exchange('b')]);
  });

  it('reports reduced: false when nothing can be removed', async () => {
    const messages: Message[] = [system, task, ...exchange('a', 3)];
    const result = await slidingWindow({ maxMessages: 2 }).reduce(messages, overflow());
    expect(result).toEqual({ messages, reduced: false });
  });

  it('defaults to 40 messages', async () => {
    const messages: Message[] = [
      task,
      ...Array.from({ length: 30 }, (_, index) => exchange(`x${index}`)).flat(),
    ];
    const { messages: kept } = await slidingWindow().reduce(messages, overflow());
    expect(kept).toHaveLength(39);
    expect(kept[0]).toBe(task);
    expectPaired(kept);
  });

  it.each([0, 1, 2.5])('rejects maxMessages %s', (maxMessages) => {
    expect(() => slidingWindow({ maxMessages })).toThrowError(
      expect.objectContaining({ code: 'config.invalid' }),
    );
  });
});

describe('summarizing', () => {
  it('replaces older messages with a summary and keeps the recent ones whole', async () => {
    const calls: Message[][] = [];
    const manager = summarizing({
      keepRecent: 3,
      summarize: async (messages) => {
        calls.push(messages);
        return 'Searched flights a and b.';
      },
    });
    const messages: Message[] = [system, task, ...exchange('a'), ...exchange('b'), ...exchange('c', 2)];
    const { messages: kept, reduced } = await manager.reduce(messages, overflow());
    expect(reduced).toBe(true);
    expect(calls).toEqual([[...exchange('a'), ...exchange('b')]]);
    expect(kept).toEqual([
      system,
      task,
      {
        role: 'user',
        content: `${SUMMARY_PREFIX} (4 messages replaced to fit the context window):\nSearched flights a and b.`,
      },
      ...exchange('c', 2),
    ]);
    expectPaired(kept);
  });

  it('keeps fewer recent messages on each further attempt, summarising the earlier summary again', async () => {
    const manager = summarizing({
      keepRecent: 4,
      summarize: async (messages) => `summary of ${messages.length}`,
    });
    const messages: Message[] = [task, ...exchange('a'), ...exchange('b'), ...exchange('c')];
    const first = await manager.reduce(messages, overflow(1));
    expect(first.messages.slice(2)).toEqual([...exchange('b'), ...exchange('c')]);
    const second = await manager.reduce(first.messages, overflow(2));
    expect(second.messages).toEqual([
      task,
      {
        role: 'user',
        content: `${SUMMARY_PREFIX} (3 messages replaced to fit the context window):\nsummary of 3`,
      },
      ...exchange('c'),
    ]);
  });

  it('reports reduced: false when there is nothing old enough to summarise', async () => {
    let called = false;
    const manager = summarizing({
      summarize: async () => {
        called = true;
        return 's';
      },
    });
    const messages: Message[] = [system, task, ...exchange('a')];
    expect(await manager.reduce(messages, overflow())).toEqual({ messages, reduced: false });
    expect(called).toBe(false);
  });

  it('passes the signal on, and does not summarise once cancelled', async () => {
    const controller = new AbortController();
    let received: AbortSignal | undefined;
    const manager = summarizing({
      keepRecent: 1,
      summarize: async (_messages, context) => {
        received = context.signal;
        return 's';
      },
    });
    const messages: Message[] = [task, ...exchange('a'), ...exchange('b')];
    await manager.reduce(messages, { ...overflow(), signal: controller.signal });
    expect(received).toBe(controller.signal);
    const reason = new Error('cancelled');
    controller.abort(reason);
    await expect(manager.reduce(messages, { ...overflow(), signal: controller.signal })).rejects.toBe(reason);
  });

  it('rejects an empty summary and bad options', async () => {
    const manager = summarizing({ keepRecent: 1, summarize: async () => '  ' });
    await expect(
      manager.reduce([task, ...exchange('a'), ...exchange('b')], overflow()),
    ).rejects.toMatchObject({
      code: 'config.invalid',
    });
    expect(() => summarizing({} as never)).toThrowError(expect.objectContaining({ code: 'config.invalid' }));
    expect(() => summarizing({ summarize: async () => 's', keepRecent: 0 })).toThrowError(
      expect.objectContaining({ code: 'config.invalid' }),
    );
  });
});

describe('noReduction', () => {
  it('never reduces', async () => {
    const messages: Message[] = [system, task, ...exchange('a')];
    expect(await noReduction().reduce(messages, overflow())).toEqual({ messages, reduced: false });
    expect(noReduction().name).toBe('no-reduction');
  });
});

describe('slidingWindow bound: a stable prefix for the prompt cache', () => {
  const history = (count: number): Message[] =>
    Array.from({ length: count }, (_, index) =>
      index % 2 === 0
        ? { role: 'user' as const, content: `question ${index / 2}` }
        : { role: 'assistant' as const, content: `answer ${(index - 1) / 2}` },
    );

  it('keeps the same oldest messages while the history grows by less than a quarter window', () => {
    const window = slidingWindow({ maxMessages: 40 });
    const starts = [42, 44, 46, 48, 50].map((count) => window.bound!(history(count)).slice(1, 3));
    // The task (the first question) stays; the kept history after it starts at the same message for 42 to 50.
    for (const start of starts) expect(start).toEqual(starts[0]);
    for (const count of [41, 45, 50, 51, 80]) {
      const kept = window.bound!(history(count)).length;
      expect(kept).toBeLessThanOrEqual(40);
      expect(kept).toBeGreaterThanOrEqual(30);
    }
    expect(window.bound!(history(51)).slice(1, 3)).not.toEqual(starts[0]);
  });
});
