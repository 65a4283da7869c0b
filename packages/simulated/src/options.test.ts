// Option checking of simulated(), withModel(), startSimulatedServer() and fault schedules: no option is ignored
// silently, and the message says what to fix.

import { KeelError } from '@keel/core';
import { describe, expect, it } from 'vitest';
import { validateFaultSchedule } from './faults.js';
import { simulated } from './provider.js';
import { startSimulatedServer } from './server.js';

function thrownBy(make: () => unknown): KeelError {
  try {
    make();
  } catch (error) {
    if (KeelError.isInstance(error)) return error;
    throw new Error(`expected a KeelError, got ${String(error)}`);
  }
  throw new Error('expected a throw');
}

async function rejectionOf(pending: Promise<unknown>): Promise<KeelError> {
  const error = await pending.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!KeelError.isInstance(error)) throw new Error(`expected a KeelError, got ${String(error)}`);
  return error;
}

describe('simulated options', () => {
  it('null or non-object options are config.invalid', async () => {
    for (const options of [null, [], 'demo']) {
      expect(thrownBy(() => simulated(options as never)).message).toMatch(
        /^simulated\(\): options must be an object/,
      );
      const error = await rejectionOf(startSimulatedServer(options as never));
      expect(error.code).toBe('config.invalid');
      expect(error.message).toMatch(/^startSimulatedServer\(\): options must be an object/);
    }
    expect(thrownBy(() => simulated().withModel('x', null as never)).code).toBe('config.invalid');
  });

  it('simulated() names an unknown option and the closest known one', () => {
    const error = thrownBy(() => simulated({ fault: 'demo' } as never));
    expect(error.code).toBe('config.invalid');
    expect(error.data).toMatchObject({ option: 'fault' });
    expect(error.message).toBe(
      'Unknown simulated() option fault (known: model, faults, brain, onRequest, contextWindowTokens, server, api); did you mean faults?',
    );
    expect(thrownBy(() => simulated({ baseURL: 'http://127.0.0.1:1/v1' } as never)).message).toMatch(
      /^Unknown simulated\(\) option baseURL \(known: /,
    );
    expect(thrownBy(() => simulated({ onRequest: 'log' } as never)).message).toMatch(
      /onRequest must be a function/,
    );
  });

  it('withModel() and models.<name> reject unknown model options', async () => {
    expect(
      thrownBy(() => simulated().withModel('sim-fallback', { contextWindow: 10 } as never)).message,
    ).toBe(
      'Unknown models.sim-fallback option contextWindow (known: faults, contextWindowTokens, brain, outages); did you mean contextWindowTokens?',
    );
    const error = await rejectionOf(startSimulatedServer({ models: { m: { fault: 'reset=1' } } } as never));
    expect(error.message).toMatch(/Unknown models\.m option fault \(known: .*\); did you mean faults\?/);
  });

  it('startSimulatedServer() rejects unknown options and a non-boolean keepProcessAlive', async () => {
    const error = await rejectionOf(startSimulatedServer({ contextWindow: 100 } as never));
    expect(error.code).toBe('config.invalid');
    expect(error.message).toBe(
      'Unknown startSimulatedServer() option contextWindow (known: faults, models, brain, contextWindowTokens, apiKey, port, onRequest, clock, epochMs, keepProcessAlive, quota); did you mean contextWindowTokens?',
    );
    const keepAlive = await rejectionOf(startSimulatedServer({ keepProcessAlive: 'no' } as never));
    expect(keepAlive.message).toMatch(/keepProcessAlive must be true or false/);
    const quota = await rejectionOf(
      startSimulatedServer({ quota: { requestsPerWindow: 0, tokensPerWindow: 5 } }),
    );
    expect(quota.message).toMatch(/quota\.requestsPerWindow must be a positive integer/);
  });

  it('a fault schedule rejects unknown fields', async () => {
    expect(thrownBy(() => validateFaultSchedule({ retryAfter: 0 } as never)).message).toMatch(
      /option retryAfter \(known: .*\); did you mean retryAfterMs\?/,
    );
    const error = await rejectionOf(startSimulatedServer({ faults: { rate: { reset: 0.1 } } } as never));
    expect(error.message).toMatch(/Unknown faults option rate \(known: .*\); did you mean rates\?/);
    expect(thrownBy(() => simulated({ faults: { sequence: ['reset'], sed: 3 } } as never)).message).toMatch(
      /option sed \(known: .*\); did you mean seed\?/,
    );
  });
});
