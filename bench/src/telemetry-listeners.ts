// Where a step's telemetry time goes: the time spent inside keel's two listeners (keel's code and the SDK calls it
// makes there), per step and per kind of run event, over loopback HTTP and in process. What the fair measurement of
// telemetry.ts finds beyond this is spent outside the listeners: collecting the garbage of what the SDK keeps (spans
// until they are exported), and core building the run events. Part of `npm run bench:telemetry` (telemetry.ts).

import { performance } from 'node:perf_hooks';
import { agent, type ModelProvider, type RunEventListener } from '@keel/core';
import type { KeelMetrics, KeelTracing } from '@keel/otel';
import { lookupTool } from './step-agent.js';

/** Microseconds a step spends inside each listener, by the kind of event that called it. */
interface ListenerTime {
  readonly tracingUs: number;
  readonly metricsUs: number;
  readonly byEventUs: ReadonlyMap<string, number>;
}

/**
 * Runs `runs` runs of an agent observed by `tracing` and `metrics` (after a quarter as many to warm up), timing each
 * listener call with `performance.now()` (about 0.05 µs a call is the timer's own).
 */
export async function listenerTime(options: {
  model: ModelProvider;
  tracing: KeelTracing;
  metrics: KeelMetrics;
  steps: number;
  runs: number;
  afterRun: () => void;
}): Promise<ListenerTime> {
  const totals = { tracing: 0, metrics: 0 };
  const byEvent = new Map<string, number>();
  const timed =
    (which: 'tracing' | 'metrics', listener: RunEventListener): RunEventListener =>
    (event) => {
      const startedAt = performance.now();
      listener(event);
      const spent = performance.now() - startedAt;
      totals[which] += spent;
      byEvent.set(event.type, (byEvent.get(event.type) ?? 0) + spent);
    };
  const observed = agent({
    model: options.model,
    tools: [lookupTool],
    limits: { maxTurns: options.steps + 2 },
  });
  observed.onEvent(timed('tracing', options.tracing.onEvent));
  observed.onEvent(timed('metrics', options.metrics.onEvent));
  const runMany = async (count: number) => {
    for (let index = 0; index < count; index++) {
      await observed.run('go');
      options.afterRun();
    }
  };
  await runMany(Math.ceil(options.runs / 4));
  totals.tracing = 0;
  totals.metrics = 0;
  byEvent.clear();
  await runMany(options.runs);
  const perStepUs = (ms: number) => (ms * 1_000) / (options.runs * options.steps);
  return {
    tracingUs: perStepUs(totals.tracing),
    metricsUs: perStepUs(totals.metrics),
    byEventUs: new Map([...byEvent].map(([type, ms]) => [type, perStepUs(ms)])),
  };
}

/** Prints what {@link listenerTime} found, one line per listener and one for the events that cost most. */
export function printListenerTime(title: string, time: ListenerTime): void {
  const events = [...time.byEventUs]
    .sort((first, second) => second[1] - first[1])
    .map(([type, us]) => `${type} ${us.toFixed(2)}`)
    .join(', ');
  console.log(`  ${title}`);
  console.log(`    tracing ${time.tracingUs.toFixed(2)} µs, metrics ${time.metricsUs.toFixed(2)} µs a step`);
  console.log(`    by event (µs a step, both listeners): ${events}`);
}
