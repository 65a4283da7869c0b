// A keel agent as a fleet subject, for the quota test: the worker module each process of the fleet makes its subject
// from (`createChaosSubject({ pace })`). Built into dist/test-support, which the package does not publish.
import { agent, type JsonValue, tool } from '@keel/core';
import { keelSubject } from '../keel-subject.js';
import type { ChaosSubject } from '../subject.js';

const weather = tool({
  name: 'get_weather',
  description: 'Current weather for a city',
  input: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
  idempotent: true,
  timeoutMs: 5_000,
  execute: ({ city }: { city: string }) => `Sunny in ${city}`,
});

/** Options of the quota test's subject: whether the agent paces its calls by the provider's rate-limit headers. */
export interface QuotaSubjectOptions {
  readonly pace: boolean;
}

/**
 * A keel agent with one idempotent tool and enough retries to outlast the quota's windows, with the pace governor on
 * (`keel-pace`) or off (`keel-no-pace`), the same in every worker process.
 */
export function createChaosSubject(options: JsonValue): ChaosSubject {
  const { pace } = (options ?? {}) as unknown as QuotaSubjectOptions;
  return keelSubject({
    name: pace === true ? 'keel-pace' : 'keel-no-pace',
    worker: { module: import.meta.url, options: { pace: pace === true } },
    build: ({ models: [model], environment }) => ({
      agent: agent({
        model,
        tools: environment.instrumentTools([weather]),
        pace: pace === true,
        breaker: false,
        retry: { maxAttempts: 8 },
      }),
    }),
  });
}
