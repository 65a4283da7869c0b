import { describe, expect, it } from 'vitest';
import { checkpointOf } from './durable-writes.js';
import { journalLogWriteOf } from './journal-log-cursor.js';
import { MessageLogPart } from './message-log-cursor.js';

/** The getter behind `key` on `record`. */
function getterOf(record: object, key: string): unknown {
  return Object.getOwnPropertyDescriptor(record, key)?.get;
}

describe("a durable run's store writes", () => {
  it('share one getter for each lazy field, never a closure per write (one hidden class for all writes)', () => {
    const fields = { expectedVersion: 1, owner: 'me', status: 'running' as const, nowMs: 5 };
    const writes = ['a', 'b'].map((content) =>
      checkpointOf(fields, {
        text: JSON.stringify({ step: 1, content }),
        log: new MessageLogPart(1, [{ role: 'user', content }]),
        journal: { start: 0, texts: ['{"type":"x"}'], dropped: 0, end: 1, field: { entries: 1, dropped: 0 } },
      }),
    );
    const [first, second] = writes as [(typeof writes)[0], (typeof writes)[0]];
    expect(getterOf(first, 'state')).toBeTypeOf('function');
    expect(getterOf(first, 'state')).toBe(getterOf(second, 'state'));
    expect(getterOf(first.messages!, 'messages')).toBe(getterOf(second.messages!, 'messages'));
    expect(getterOf(first.journal!, 'entries')).toBe(getterOf(second.journal!, 'entries'));
    expect([first.state, second.state]).toEqual([
      { step: 1, content: 'a' },
      { step: 1, content: 'b' },
    ]);
    expect(second.messages).toMatchObject({ start: 1, texts: ['{"role":"user","content":"b"}'] });
    expect(second.messages!.messages).toEqual([{ role: 'user', content: 'b' }]);
    expect(
      journalLogWriteOf({
        start: 2,
        texts: ['{"n":1}'],
        dropped: 1,
        end: 3,
        field: { entries: 1, dropped: 1 },
      }),
    ).toMatchObject({ start: 2, dropped: 1, entries: [{ n: 1 }] });
  });
});
