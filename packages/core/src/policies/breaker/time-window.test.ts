import { describe, expect, it } from 'vitest';
import { KeelError } from '../../errors/keel-error.js';
import { FakeClock } from '../../testing/fake-clock.js';
import { timeWindow } from './time-window.js';

describe('timeWindow', () => {
  it('opens when the failure rate over the window reaches the threshold, once minimumCalls is met', () => {
    const clock = new FakeClock(0);
    const window = timeWindow({ windowMs: 10_000, buckets: 10, minimumCalls: 4 }).createWindow(clock);
    window.success();
    window.success();
    expect(window.failure()).toBe(false); // 3 calls
    expect(window.failure()).toBe(true); // 2 of 4
  });

  it('forgets calls older than the window', async () => {
    const clock = new FakeClock(0);
    const window = timeWindow({ windowMs: 10_000, buckets: 10, minimumCalls: 2 }).createWindow(clock);
    window.failure();
    await clock.advance(10_000); // the first bucket has left the window
    expect(window.failure()).toBe(false); // 1 call in the window
    expect(window.failure()).toBe(true);
  });

  it('slides one bucket at a time', async () => {
    const clock = new FakeClock(0);
    const window = timeWindow({
      windowMs: 10_000,
      buckets: 10,
      minimumCalls: 3,
      failureRateThreshold: 0.6,
    }).createWindow(clock);
    window.success(); // bucket 0
    await clock.advance(5_000);
    window.success(); // bucket 5
    await clock.advance(4_999);
    // Still inside bucket 9: buckets 0..9 are all in the window, so 1 failure of 3.
    expect(window.failure()).toBe(false);
    await clock.advance(1);
    // Bucket 10: bucket 0 (one success) left, so 2 failures of 3.
    expect(window.failure()).toBe(true);
  });

  it('reuses a slot for a new bucket without mixing counts', async () => {
    const clock = new FakeClock(0);
    const window = timeWindow({
      windowMs: 2_000,
      buckets: 2,
      minimumCalls: 2,
      failureRateThreshold: 1,
    }).createWindow(clock);
    window.success();
    window.success();
    await clock.advance(2_000); // same slot (bucket 2 % 2 = 0), new bucket
    expect(window.failure()).toBe(false);
    expect(window.failure()).toBe(true); // 2 of 2: the old successes did not leak in
  });

  it('round-trips through JSON and drops buckets of another width', async () => {
    const clock = new FakeClock(0);
    const strategy = timeWindow({ windowMs: 10_000, buckets: 10, minimumCalls: 3 });
    const window = strategy.createWindow(clock);
    window.failure();
    await clock.advance(1_000);
    window.success();
    const saved = JSON.parse(JSON.stringify(window.toJSON()));
    expect(saved).toEqual({
      bucketMs: 1_000,
      buckets: [
        [0, 0, 1],
        [1, 1, 0],
      ],
    });
    const restored = strategy.createWindow(clock, saved);
    expect(restored.failure()).toBe(true); // 2 of 3
    const other = timeWindow({ windowMs: 20_000, buckets: 10 }).createWindow(clock, saved);
    expect(other.toJSON()).toEqual({ bucketMs: 2_000, buckets: [] });
    const broken = strategy.createWindow(clock, { bucketMs: 1_000, buckets: [[0, -1, 2]] });
    expect(broken.toJSON()).toEqual({ bucketMs: 1_000, buckets: [] });
  });

  it('forgets everything on reset', () => {
    const clock = new FakeClock(0);
    const window = timeWindow({ minimumCalls: 1 }).createWindow(clock);
    window.success();
    window.reset();
    expect(window.toJSON()).toEqual({ bucketMs: 6_000, buckets: [] });
  });

  it('defaults to 60 s in 10 buckets, 50 %, minimum 10 calls', () => {
    expect(timeWindow().options).toEqual({
      windowMs: 60_000,
      buckets: 10,
      failureRateThreshold: 0.5,
      minimumCalls: 10,
    });
  });

  it.each([
    [{ windowMs: 5, buckets: 10 }, /windowMs must be at least buckets \(10\), got 5/],
    [{ buckets: 0 }, /buckets must be an integer >= 1/],
    [{ failureRateThreshold: -1 }, /failureRateThreshold must be a number in \(0, 1\]/],
    [{ minimumCalls: 0 }, /minimumCalls must be an integer >= 1/],
    [{ size: 5 }, /Unknown timeWindow option size \(known: windowMs, buckets/],
  ])('rejects %j with config.invalid', (options, message) => {
    expect(() => timeWindow(options as never)).toThrow(message);
    expect(() => timeWindow(options as never)).toThrow(KeelError);
  });
});
