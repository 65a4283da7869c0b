import { describe, expect, it } from 'vitest';
import { lazyProperty } from './lazy-property.js';

describe('lazyProperty', () => {
  it('makes the value on the first read only, once, and the record spreads, clones and serialises with it', () => {
    let parses = 0;
    const withState = lazyProperty('state', (text: string) => {
      parses++;
      return JSON.parse(text) as unknown;
    });
    const record = withState({ version: 2 }, '{"step":3}') as { version: number; state: unknown };
    expect(parses).toBe(0);
    expect(record.state).toEqual({ step: 3 });
    expect(record.state).toBe(record.state);
    expect(parses).toBe(1);
    expect(Object.keys(record)).toEqual(['version', 'state']);
    expect({ ...record }).toMatchObject({ version: 2, state: { step: 3 } });
    expect(JSON.parse(JSON.stringify(record))).toEqual({ version: 2, state: { step: 3 } });
    expect(structuredClone(record)).toEqual({ version: 2, state: { step: 3 } });
    expect(parses).toBe(1);
  });

  it('keeps each record its own source and value, one getter for all', () => {
    const withDouble = lazyProperty('double', (value: number) => value * 2);
    const first = withDouble({}, 2) as { double: number };
    const second = withDouble({}, 5) as { double: number };
    expect([first.double, second.double]).toEqual([4, 10]);
    const getterOf = (record: object) => Object.getOwnPropertyDescriptor(record, 'double')?.get;
    expect(getterOf(first)).toBe(getterOf(second));
  });
});
