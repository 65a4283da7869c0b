import { describe, expect, it } from 'vitest';
import { CONTROL_SIGNAL, isControlSignal } from '../../errors/control.js';
import { KeelError } from '../../errors/keel-error.js';
import { isDirective, isRetryStep, isStopRun, RetryStep, retryStep, StopRun, stopRun } from './directives.js';

describe('retryStep', () => {
  it('is a control signal carrying guidance for the model', () => {
    const directive = retryStep('The date must be in the future; ask the user for another.');
    expect(directive).toBeInstanceOf(RetryStep);
    expect(directive).toBeInstanceOf(Error);
    expect(directive.kind).toBe('retry-step');
    expect(directive.guidance).toBe('The date must be in the future; ask the user for another.');
    expect(isControlSignal(directive)).toBe(true);
    expect(directive[CONTROL_SIGNAL]).toBe(true);
    expect(isRetryStep(directive)).toBe(true);
    expect(isStopRun(directive)).toBe(false);
    expect(isDirective(directive)).toBe(true);
  });

  it.each([[''], ['   '], [42], ['x'.repeat(10_001)]])('rejects guidance %j', (guidance) => {
    expect(() => retryStep(guidance as string)).toThrow(KeelError);
  });
});

describe('stopRun', () => {
  it('is a control signal carrying a reason and an optional JSON output', () => {
    const directive = stopRun('order placed', { orderId: 'A-1', items: [1, 2] });
    expect(directive).toBeInstanceOf(StopRun);
    expect(directive).toMatchObject({
      kind: 'stop-run',
      reason: 'order placed',
      output: { orderId: 'A-1', items: [1, 2] },
    });
    expect(isControlSignal(directive)).toBe(true);
    expect(isStopRun(directive)).toBe(true);
    expect(isRetryStep(directive)).toBe(false);
    expect(stopRun('done').output).toBeUndefined();
  });

  it.each([
    ['an empty reason', () => stopRun('')],
    ['a function output', () => stopRun('r', (() => 1) as never)],
    ['a non-finite output', () => stopRun('r', { n: Number.NaN })],
    ['a class instance output', () => stopRun('r', new Date() as never)],
  ])('rejects %s', (_label, make) => {
    expect(make).toThrowError(expect.objectContaining({ code: 'config.invalid' }));
  });
});

describe('type guards', () => {
  it('recognise directives from another copy of keel by their global brand', () => {
    const foreign = {
      [Symbol.for('keel.control-signal')]: true,
      [Symbol.for('keel.directive')]: 'stop-run',
      reason: 'r',
    };
    expect(isStopRun(foreign)).toBe(true);
    expect(isDirective(foreign)).toBe(true);
  });

  it.each([
    [null],
    [undefined],
    ['retry-step'],
    [new Error('x')],
    [{ kind: 'retry-step' }],
    [{ [Symbol.for('keel.directive')]: 'other' }],
  ])('reject %j', (value) => {
    expect(isDirective(value)).toBe(false);
    expect(isRetryStep(value)).toBe(false);
    expect(isStopRun(value)).toBe(false);
  });
});
