import { describe, expect, it } from 'vitest';
import type { Message } from '../../spec/model.js';
import type { RunState } from '../run/run-state.js';
import { MessageLogCursor, messageLogWriteOf, type StateSnapshot } from './message-log-cursor.js';

/** A state holding `messages` (the cursor reads only them, and serialises the rest as it is). */
function stateOf(messages: Message[]): RunState {
  return { runId: 'r', messages } as unknown as RunState;
}

/** What a store's log holds after `snapshot`'s write (it keeps `start` messages, then appends the written ones). */
function applied(log: readonly Message[], snapshot: StateSnapshot): Message[] {
  const write = messageLogWriteOf(snapshot.log!);
  return [...log.slice(0, write.start), ...(write.messages as unknown as Message[])];
}

describe('MessageLogCursor', () => {
  it('holds in a snapshot only the messages it writes, never a copy of the whole conversation', () => {
    const history: Message[] = Array.from({ length: 1_000 }, (_, index) => ({
      role: 'user',
      content: `message ${index}`,
    }));
    const cursor = new MessageLogCursor(history);
    const messages = [...history, { role: 'assistant', content: 'answer' } satisfies Message];
    const snapshot = cursor.snapshot(stateOf(messages));
    expect(snapshot.log?.start).toBe(1_000);
    expect(snapshot.log?.messages).toEqual([{ role: 'assistant', content: 'answer' }]);
    expect(JSON.parse(snapshot.text)).toEqual({ runId: 'r', messages: 1_001 });
    cursor.written(snapshot);
    const next = cursor.snapshot(stateOf([...messages, { role: 'user', content: 'more' }]));
    expect(next.log?.start).toBe(1_001);
    expect(next.log?.texts).toEqual([JSON.stringify({ role: 'user', content: 'more' })]);
  });

  it('follows the store through writes taken before earlier ones settled, a rewrite among them', () => {
    const [x, y, z, w] = ['x', 'y', 'z', 'w'].map((content): Message => ({ role: 'user', content }));
    const cursor = new MessageLogCursor([x!, y!]);
    let stored: Message[] = [x!, y!];
    // The answer is rewritten (y replaced by z), then put back, before the first write settles.
    const first = cursor.snapshot(stateOf([x!, z!]));
    const second = cursor.snapshot(stateOf([x!, y!]));
    stored = applied(stored, first);
    cursor.written(first);
    stored = applied(stored, second);
    cursor.written(second);
    expect(stored).toEqual([x, z]);
    // The store holds z where the conversation has y: the next write must rewrite it, not append after it.
    const third = cursor.snapshot(stateOf([x!, y!, w!]));
    stored = applied(stored, third);
    expect(stored).toEqual([x, y, w]);
  });

  it('serialises the messages when a store reads them, not when the snapshot is taken', () => {
    let reads = 0;
    const counted = {
      role: 'user',
      get content() {
        reads++;
        return 'counted';
      },
    } as unknown as Message;
    const cursor = new MessageLogCursor();
    const snapshot = cursor.snapshot(stateOf([{ role: 'user', content: 'first' }, counted]));
    expect(reads).toBe(0);
    const write = messageLogWriteOf(snapshot.log!);
    expect(write.texts).toEqual([
      JSON.stringify({ role: 'user', content: 'first' }),
      JSON.stringify({ role: 'user', content: 'counted' }),
    ]);
    expect(write.messages).toEqual([
      { role: 'user', content: 'first' },
      { role: 'user', content: 'counted' },
    ]);
    // Once: the texts are made on the first read and kept.
    expect(reads).toBe(1);
  });
});
