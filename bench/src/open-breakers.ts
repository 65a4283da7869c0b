// The reject path: what a call costs while the breaker is open. Each breaker is opened by real failures, with an
// open period far longer than the benchmark so that it stays open throughout (checked again at the end).
import { circuitBreaker, consecutive } from '@keel/core';
import { CircuitState, ConsecutiveBreaker, circuitBreaker as cockatielBreaker, handleAll } from 'cockatiel';
import CircuitBreaker from 'opossum';
import type { BenchCase } from './harness.js';
import { bare, failing } from './subjects.js';

const OPEN = 'a call while the breaker is open (rejected)';
const OPEN_FOR_MS = 3_600_000;

export interface OpenBreakers {
  readonly cases: BenchCase[];
  /** Throws unless every breaker is still open: a breaker that half-opened mid-run would make its figure a lie. */
  assertStillOpen(): void;
  readonly opossumBreakers: readonly CircuitBreaker[];
}

async function failTimes(times: number, call: () => Promise<unknown>): Promise<void> {
  for (let index = 0; index < times; index++) {
    try {
      await call();
    } catch {
      // Failing is the point.
    }
  }
}

export async function openBreakers(): Promise<OpenBreakers> {
  const keel = circuitBreaker({ strategy: consecutive({ threshold: 5 }), halfOpenAfterMs: OPEN_FOR_MS });
  await failTimes(5, () => keel.execute(failing));

  const cockatiel = cockatielBreaker(handleAll, {
    halfOpenAfter: OPEN_FOR_MS,
    breaker: new ConsecutiveBreaker(5),
  });
  await failTimes(5, () => cockatiel.execute(failing));

  // Opossum counts failures per call to `fire`, whatever function it wraps; open it with a failing one.
  const opossum = new CircuitBreaker(failing, {
    timeout: false,
    errorThresholdPercentage: 50,
    resetTimeout: OPEN_FOR_MS,
  });
  await failTimes(5, () => opossum.fire());

  const assertStillOpen = (): void => {
    const states = {
      keel: keel.state,
      cockatiel: CircuitState[cockatiel.state],
      opossum: opossum.opened ? 'open' : 'not open',
    };
    if (keel.state !== 'open' || cockatiel.state !== CircuitState.Open || !opossum.opened) {
      throw new Error(`a breaker measured as open is not open: ${JSON.stringify(states)}`);
    }
  };
  assertStillOpen();

  return {
    cases: [
      {
        id: 'keel.breaker.open',
        label: 'keel circuit breaker',
        section: OPEN,
        run: () => keel.execute(bare),
      },
      {
        id: 'cockatiel.breaker.open',
        label: 'cockatiel circuitBreaker',
        section: OPEN,
        run: () => cockatiel.execute(bare),
      },
      { id: 'opossum.open', label: 'opossum fire', section: OPEN, run: () => opossum.fire() },
    ],
    assertStillOpen,
    opossumBreakers: [opossum],
  };
}
