import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { KeelError } from '../errors/keel-error.js';
import { systemClock } from './clock.js';
import { constant } from './delays.js';
import { retry } from './retry.js';
import { sleep } from './sleep.js';

describe('sleep', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('schedules no timer for a zero or negative delay, with or without a signal', async () => {
    const controller = new AbortController();
    for (const delayMs of [0, -5]) {
      const waits = [sleep(delayMs, systemClock), sleep(delayMs, systemClock, controller.signal)];
      expect(vi.getTimerCount()).toBe(0);
      await expect(Promise.all(waits)).resolves.toEqual([undefined, undefined]);
    }
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('still rejects a zero delay at once when the signal has already aborted', async () => {
    const controller = new AbortController();
    controller.abort('gone');
    await expect(sleep(0, systemClock, controller.signal)).rejects.toBe('gone');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('waits the delay, and stops at once with the reason when the signal aborts', async () => {
    const controller = new AbortController();
    const waited = sleep(1_000, systemClock);
    const cancelled = sleep(1_000, systemClock, controller.signal);
    expect(vi.getTimerCount()).toBe(2);
    controller.abort('gone');
    await expect(cancelled).rejects.toBe('gone');
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(waited).resolves.toBeUndefined();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('lets retry with a zero delay and a caller signal retry without any timer', async () => {
    const controller = new AbortController();
    let calls = 0;
    const timersSeen: number[] = [];
    const result = await retry({ maxAttempts: 3, delay: constant(0) }).execute(({ signal }) => {
      calls++;
      timersSeen.push(vi.getTimerCount());
      if (signal.aborted) throw signal.reason;
      if (calls < 3) throw new KeelError('provider.server_error', 'upstream 503');
      return 'third time';
    }, controller.signal);
    expect(result).toBe('third time');
    expect(timersSeen).toEqual([0, 0, 0]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
