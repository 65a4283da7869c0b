// What the UI message stream says of a recovered stream, read back by the AI SDK's readUIMessageStream.
import type { AgentStream, RunResult, StreamPart } from '@keel/core';
import { readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { toUIMessageStream } from './index.js';

function streamOf(parts: StreamPart<unknown>[]): AgentStream<unknown> {
  const last = parts.at(-1) as Extract<StreamPart<unknown>, { type: 'finish' }>;
  return {
    runId: 'run-1',
    result: Promise.resolve(last.result),
    textStream: { [Symbol.asyncIterator]: () => [][Symbol.iterator]() as never },
    toReadableStream: () => new ReadableStream(),
    async *[Symbol.asyncIterator]() {
      yield* parts;
    },
  };
}

const finished: StreamPart<unknown> = {
  type: 'finish',
  result: { runId: 'run-1', status: 'completed', stopReason: 'final_answer' } as RunResult,
};

describe('toUIMessageStream: recoveries', () => {
  it('ends the voided text block at a restarted recovery and names it; the new text follows in its own block', async () => {
    const parts: StreamPart<unknown>[] = [
      { type: 'step-start', step: 1, model: 'openai/m' },
      { type: 'text-delta', step: 1, delta: 'Here is what I' },
      {
        type: 'recovery',
        step: 1,
        errorCode: 'network.connection',
        mode: 'restarted',
        keptCharacters: 0,
        model: 'openai/m',
      },
      { type: 'text-delta', step: 1, delta: 'Here is what I did.' },
      finished,
    ];
    const chunks: UIMessageChunk[] = [];
    const reader = toUIMessageStream(streamOf(parts)).getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push(value);
    }
    expect(chunks.map((chunk) => chunk.type)).toEqual([
      'start',
      'start-step',
      'text-start',
      'text-delta',
      'text-end',
      'data-keel-recovery',
      'text-start',
      'text-delta',
      'text-end',
      'finish-step',
      'finish',
    ]);
    expect(chunks[5]).toMatchObject({ transient: true, data: { mode: 'restarted', voidedTextId: 'text-1' } });

    let message: UIMessage | undefined;
    const again = toUIMessageStream(streamOf(parts)) as ReadableStream<UIMessageChunk>;
    for await (const snapshot of readUIMessageStream({ stream: again })) message = snapshot;
    const texts = message!.parts.flatMap((part) => (part.type === 'text' ? [part.text] : []));
    expect(texts).toEqual(['Here is what I', 'Here is what I did.']);
  });

  it('keeps one text block through a continued recovery', async () => {
    const chunks: UIMessageChunk[] = [];
    const reader = toUIMessageStream(
      streamOf([
        { type: 'step-start', step: 1, model: 'openai/m' },
        { type: 'text-delta', step: 1, delta: 'Here is' },
        {
          type: 'recovery',
          step: 1,
          errorCode: 'network.connection',
          mode: 'continued',
          keptCharacters: 7,
          model: 'openai/m',
        },
        { type: 'text-delta', step: 1, delta: ' the rest.' },
        finished,
      ]),
    ).getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push(value);
    }
    expect(chunks.filter((chunk) => chunk.type === 'text-start')).toHaveLength(1);
    expect(chunks.find((chunk) => chunk.type === 'data-keel-recovery')).toMatchObject({
      data: { mode: 'continued', keptCharacters: 7 },
    });
  });
});
