import { describe, expect, it } from 'vitest';
import { eventLine } from './event-line.js';

describe('eventLine', () => {
  it('warns when the shared pace store could not answer and the process paced a call alone', () => {
    expect(
      eventLine(
        {
          type: 'pace-store-unavailable',
          runId: 'run-1',
          atMs: 0,
          step: 2,
          model: 'openai/gpt-4.1-mini',
          errorCode: 'store.unavailable',
        },
        false,
      ),
    ).toEqual({
      level: 'warn',
      message: 'pace store unavailable (store.unavailable): openai/gpt-4.1-mini paced by this process alone',
      fields: { model: 'openai/gpt-4.1-mini', errorCode: 'store.unavailable' },
    });
  });
});
