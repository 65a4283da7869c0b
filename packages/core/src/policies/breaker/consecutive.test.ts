import { describe, expect, it } from 'vitest';
import { KeelError } from '../../errors/keel-error.js';
import { FakeClock } from '../../testing/fake-clock.js';
import { consecutive } from './consecutive.js';

const clock = new FakeClock();

describe('consecutive', () => {
  it('opens on the threshold-th failure in a row', () => {
    const window = consecutive({ threshold: 3 }).createWindow(clock);
    expect(window.failure()).toBe(false);
    expect(window.failure()).toBe(false);
    expect(window.failure()).toBe(true);
  });

  it('starts counting again after a success', () => {
    const window = consecutive({ threshold: 2 }).createWindow(clock);
    expect(window.failure()).toBe(false);
    window.success();
    expect(window.failure()).toBe(false);
    expect(window.failure()).toBe(true);
  });

  it('defaults to 5 failures', () => {
    const window = consecutive().createWindow(clock);
    const results = [1, 2, 3, 4, 5].map(() => window.failure());
    expect(results).toEqual([false, false, false, false, true]);
  });

  it('waits for minimumCalls calls before it may open', () => {
    const window = consecutive({ threshold: 2, minimumCalls: 5 }).createWindow(clock);
    window.success();
    window.success();
    expect(window.failure()).toBe(false);
    expect(window.failure()).toBe(false); // 2 in a row but only 4 calls seen
    expect(window.failure()).toBe(true);
  });

  it('forgets everything on reset, minimum throughput included', () => {
    const window = consecutive({ threshold: 2, minimumCalls: 3 }).createWindow(clock);
    for (const _ of [1, 2, 3]) window.success();
    window.failure();
    window.reset();
    expect(window.failure()).toBe(false);
    expect(window.failure()).toBe(false);
    expect(window.failure()).toBe(true);
  });

  it('round-trips through JSON', () => {
    const strategy = consecutive({ threshold: 3 });
    const window = strategy.createWindow(clock);
    window.failure();
    window.failure();
    const restored = strategy.createWindow(clock, JSON.parse(JSON.stringify(window.toJSON())));
    expect(restored.toJSON()).toEqual({ failures: 2, calls: 2 });
    expect(restored.failure()).toBe(true);
  });

  it('ignores a saved window that makes no sense', () => {
    const window = consecutive({ threshold: 2 }).createWindow(clock, { failures: -4, calls: 'x' });
    expect(window.toJSON()).toEqual({ failures: 0, calls: 0 });
  });

  it('describes itself as data', () => {
    expect(consecutive({ threshold: 4 })).toMatchObject({
      kind: 'consecutive',
      options: { threshold: 4, minimumCalls: 4 },
    });
  });

  it.each([
    [{ threshold: 0 }, /threshold must be an integer >= 1, got 0/],
    [{ threshold: 2.5 }, /threshold must be an integer >= 1, got 2.5/],
    [{ minimumCalls: 0 }, /minimumCalls must be an integer >= 1/],
    [{ treshold: 3 }, /Unknown consecutive option treshold \(known: threshold, minimumCalls\)/],
  ])('rejects %j with config.invalid', (options, message) => {
    const create = () => consecutive(options as never);
    expect(create).toThrow(KeelError);
    expect(create).toThrow(message);
    try {
      create();
    } catch (error) {
      expect((error as KeelError).code).toBe('config.invalid');
    }
  });
});
