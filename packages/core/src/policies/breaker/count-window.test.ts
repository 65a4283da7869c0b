import { describe, expect, it } from 'vitest';
import { KeelError } from '../../errors/keel-error.js';
import { FakeClock } from '../../testing/fake-clock.js';
import { countWindow } from './count-window.js';

const clock = new FakeClock();

describe('countWindow', () => {
  it('opens when the failure rate over the last size calls reaches the threshold', () => {
    const window = countWindow({ size: 4, failureRateThreshold: 0.5 }).createWindow(clock);
    window.success();
    window.success();
    expect(window.failure()).toBe(false); // 3 calls: below the minimum (size)
    expect(window.failure()).toBe(true); // 2 of 4
  });

  it('stays closed below the rate', () => {
    const window = countWindow({ size: 4, failureRateThreshold: 0.75 }).createWindow(clock);
    window.success();
    window.success();
    expect(window.failure()).toBe(false);
    expect(window.failure()).toBe(false); // 2 of 4 < 0.75
  });

  it('slides: old outcomes fall out of the window', () => {
    const window = countWindow({ size: 3, failureRateThreshold: 0.6 }).createWindow(clock);
    window.failure();
    window.success();
    window.success();
    // Window is now [s, s, f]: the first failure fell out, so 1 of 3 < 0.6.
    expect(window.failure()).toBe(false);
    // [s, f, f]: 2 of 3 >= 0.6
    expect(window.failure()).toBe(true);
  });

  it('does not open before minimumCalls even at 100 % failures', () => {
    const window = countWindow({ size: 10, minimumCalls: 3 }).createWindow(clock);
    expect(window.failure()).toBe(false);
    expect(window.failure()).toBe(false);
    expect(window.failure()).toBe(true);
  });

  it('forgets everything on reset', () => {
    const window = countWindow({ size: 2 }).createWindow(clock);
    window.failure();
    window.reset();
    expect(window.toJSON()).toEqual({ outcomes: '' });
    expect(window.failure()).toBe(false);
  });

  it('round-trips through JSON, oldest first, and keeps the newest outcomes when the window shrinks', () => {
    const window = countWindow({ size: 4 }).createWindow(clock);
    window.success();
    window.failure();
    window.success();
    window.success();
    window.failure(); // the first success falls out
    expect(window.toJSON()).toEqual({ outcomes: 'fssf' });
    const smaller = countWindow({ size: 2, minimumCalls: 2 }).createWindow(clock, window.toJSON());
    expect(smaller.toJSON()).toEqual({ outcomes: 'sf' });
    expect(smaller.failure()).toBe(true); // [f, f]
  });

  it('ignores a saved window that makes no sense', () => {
    expect(countWindow().createWindow(clock, { outcomes: 'sxf' }).toJSON()).toEqual({ outcomes: '' });
    expect(countWindow().createWindow(clock, 12).toJSON()).toEqual({ outcomes: '' });
  });

  it('defaults to 20 calls, 50 %, minimum 20', () => {
    expect(countWindow().options).toEqual({ size: 20, failureRateThreshold: 0.5, minimumCalls: 20 });
  });

  it.each([
    [{ size: 0 }, /size must be an integer >= 1/],
    [{ failureRateThreshold: 0 }, /failureRateThreshold must be a number in \(0, 1\]/],
    [{ failureRateThreshold: 50 }, /failureRateThreshold must be a number in \(0, 1\] such as 0.5/],
    [{ size: 5, minimumCalls: 6 }, /minimumCalls \(6\) cannot exceed size \(5\)/],
    [
      { windowMs: 5 },
      /Unknown countWindow option windowMs \(known: size, failureRateThreshold, minimumCalls\)/,
    ],
  ])('rejects %j with config.invalid', (options, message) => {
    expect(() => countWindow(options as never)).toThrow(message);
    expect(() => countWindow(options as never)).toThrow(KeelError);
  });
});
