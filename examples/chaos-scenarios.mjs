// Scenarios of your own for `keel chaos`: `keel chaos examples/support.yaml --scenarios-file examples/chaos-scenarios.mjs`.
// The shape is described in packages/chaos/README.md ("Your own scenarios").
//
// long-outage: the built-in outage scenarios compress a minute-long outage into 1.5 s, shorter than keel's breaker
// stays open (5 s), so their probe goal is not exercised. Here the primary is down for 8 s with no fallback: the
// breaker opens, goes half-open at least once while the model is still down, and the probe goal is judged.
export const scenarios = [
  {
    name: 'long-outage',
    title: 'primary down for 8 s, no fallback',
    description:
      'The primary model answers 503 to every request for 8 s while runs keep arriving for 6 s, and the subject has ' +
      'no fallback: long enough for an open breaker to go half-open while the model is still down.',
    primary: { outages: [{ startMs: 300, endMs: 8_300, fault: 'unavailable' }] },
    fallbacksOffered: false,
    arrivalMs: 6_000,
    minimum: 'clean',
    goals: ['probes', 'duplicates', 'typed'],
  },
];
