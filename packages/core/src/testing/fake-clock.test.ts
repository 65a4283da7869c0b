import { describe, expect, it } from 'vitest';
import { KeelError } from '../errors/keel-error.js';
import { FakeClock } from './fake-clock.js';

describe('FakeClock', () => {
  it('fires timers in due order, ties in the order they were set, and only once due', async () => {
    const clock = new FakeClock(0);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push('c@30'), 30);
    clock.setTimeout(() => fired.push('a@10'), 10);
    clock.setTimeout(() => fired.push('b@10'), 10);
    clock.setTimeout(() => fired.push('d@0'), 0);
    await clock.advance(9);
    expect(fired).toEqual(['d@0']);
    await clock.advance(21);
    expect(fired).toEqual(['d@0', 'a@10', 'b@10', 'c@30']);
    expect(clock.now()).toBe(30);
    expect(clock.pendingTimers).toBe(0);
  });

  it('runs each callback at its own time, and fires timers set by callbacks when they fall due', async () => {
    const clock = new FakeClock(0);
    const seen: number[] = [];
    clock.setTimeout(() => {
      seen.push(clock.now());
      clock.setTimeout(() => seen.push(clock.now()), 5);
    }, 10);
    await clock.advance(100);
    expect(seen).toEqual([10, 15]);
    expect(clock.now()).toBe(100);
  });

  it('keeps 10,000 timers in order, with clearTimeout removing exactly the cleared ones', async () => {
    const clock = new FakeClock(0);
    const fired: number[] = [];
    const handles: unknown[] = [];
    // A fixed pseudo-random sequence of delays, many of them equal.
    let seed = 7;
    const delays = Array.from({ length: 10_000 }, () => {
      seed = (seed * 48_271) % 2_147_483_647;
      return seed % 1_000;
    });
    delays.forEach((delayMs, index) => {
      handles.push(clock.setTimeout(() => fired.push(index), delayMs));
    });
    for (let index = 0; index < 10_000; index += 3) clock.clearTimeout(handles[index]);
    expect(clock.pendingTimers).toBe(10_000 - 3_334);
    await clock.advance(1_000);
    const expected = delays
      .map((delayMs, index) => ({ delayMs, index }))
      .filter(({ index }) => index % 3 !== 0)
      .sort((left, right) => left.delayMs - right.delayMs || left.index - right.index)
      .map(({ index }) => index);
    expect(fired).toEqual(expected);
    expect(clock.pendingTimers).toBe(0);
  });

  it('ignores clearing a timer twice, an unknown handle, or one that already fired', async () => {
    const clock = new FakeClock(0);
    let calls = 0;
    const handle = clock.setTimeout(() => calls++, 1);
    const other = clock.setTimeout(() => calls++, 2);
    await clock.advance(1);
    clock.clearTimeout(handle);
    clock.clearTimeout('nonsense');
    clock.clearTimeout(other);
    clock.clearTimeout(other);
    await clock.advance(10);
    expect(calls).toBe(1);
    expect(clock.pendingTimers).toBe(0);
  });

  it('fires a delay above 2^31 - 1 ms, Infinity or NaN after 1 ms, as Node does, so such timers are caught', async () => {
    const clock = new FakeClock(0);
    const firedAt: number[] = [];
    clock.setTimeout(() => firedAt.push(clock.now()), 2 ** 31);
    clock.setTimeout(() => firedAt.push(clock.now()), Number.POSITIVE_INFINITY);
    clock.setTimeout(() => firedAt.push(clock.now()), Number.NaN);
    clock.setTimeout(() => firedAt.push(clock.now()), 2 ** 31 - 1);
    await clock.advance(1);
    expect(firedAt).toEqual([1, 1, 1]);
    expect(clock.pendingTimers).toBe(1);
  });

  it('fires a negative delay at once', async () => {
    const clock = new FakeClock(0);
    let fired = false;
    clock.setTimeout(() => {
      fired = true;
    }, -5);
    await clock.advance(0);
    expect(fired).toBe(true);
  });

  it.each([Number.NaN, -1, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])(
    'refuses to advance by %s with config.invalid, moving no time',
    (ms) => {
      const clock = new FakeClock(0);
      let caught: unknown;
      try {
        void clock.advance(ms);
      } catch (error) {
        caught = error;
      }
      expect(KeelError.isInstance(caught) && caught.code).toBe('config.invalid');
      expect((caught as KeelError).message).toMatch(/ms must be a finite number of milliseconds/);
      expect(clock.now()).toBe(0);
    },
  );

  it('runAll fires every timer however far away, in order', async () => {
    const clock = new FakeClock(0);
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(clock.now()), 86_400_000);
    clock.setTimeout(() => fired.push(clock.now()), 5);
    await clock.runAll();
    expect(fired).toEqual([5, 86_400_000]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('runUntilSettled moves time until the promise settles and hands back its value or its error', async () => {
    const clock = new FakeClock(0);
    const late = new Promise<string>((resolve) => clock.setTimeout(() => resolve('done'), 95));
    expect(await clock.runUntilSettled(late)).toBe('done');
    expect(clock.now()).toBe(100);
    const failing = new Promise((_resolve, reject) => clock.setTimeout(() => reject(new Error('boom')), 5));
    await expect(clock.runUntilSettled(failing, { stepMs: 1 })).rejects.toThrow('boom');
    expect(clock.now()).toBe(105);
  });

  it('runUntilSettled with stepMs 0 fires what is due now and never moves time', async () => {
    const clock = new FakeClock(0);
    let ticks = 0;
    const chain = new Promise<number>((resolve) => {
      const tick = (): void => {
        ticks++;
        if (ticks === 3) resolve(ticks);
        else clock.setTimeout(tick, 0);
      };
      clock.setTimeout(tick, 0);
    });
    expect(await clock.runUntilSettled(chain, { stepMs: 0 })).toBe(3);
    expect(clock.now()).toBe(0);
  });

  it('runUntilSettled gives up after maxMs of fake time, and refuses a bad stepMs', async () => {
    const clock = new FakeClock(0);
    const never = new Promise<never>(() => undefined);
    await expect(clock.runUntilSettled(never, { stepMs: 100, maxMs: 1_000 })).rejects.toMatchObject({
      code: 'internal.unexpected',
      message: expect.stringContaining('still pending after 1000 ms'),
    });
    expect(clock.now()).toBe(1_000);
    await expect(clock.runUntilSettled(never, { stepMs: -1 })).rejects.toMatchObject({
      code: 'config.invalid',
    });
  });
});
