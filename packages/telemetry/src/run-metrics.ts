import type { Agent, CircuitBreaker, Disposable, RetryBudget, RunEvent } from '@keel/core';
import { breakerTarget, errorType, modelParts, nameLabel } from './label-values.js';
import { KEEL_METRICS, type MetricDefinition } from './metric-catalogue.js';

/** Metric attributes: attribute key to value. Keys absent from a measurement are left out of its series. */
export type MetricAttributes = Record<string, string>;

/** Where measurements go: an OpenTelemetry meter, a prom-client registry. */
export interface MetricsSink {
  /** Adds `value` to a counter or an up-down counter. */
  add(metric: MetricDefinition, value: number, attributes: MetricAttributes): void;
  /** Records one histogram measurement. */
  record(metric: MetricDefinition, value: number, attributes: MetricAttributes): void;
}

/** One gauge's value, read when metrics are collected. */
export interface GaugeReading {
  readonly metric: MetricDefinition;
  readonly value: number;
  readonly attributes: MetricAttributes;
}

/** What {@link RunMetrics.observe} needs of an agent. */
export type ObservableAgent = Pick<Agent<unknown>, 'name' | 'onEvent' | 'breakers'>;

interface ObservedBreaker {
  readonly breaker: CircuitBreaker;
  readonly attributes: MetricAttributes;
}

const BREAKER_STATES = ['closed', 'open', 'half-open'] as const;

/**
 * Turns run events into measurements of {@link KEEL_METRICS}, and reads the gauges (breaker states, retry budgets)
 * when asked. Vendor-neutral: the OpenTelemetry and Prometheus packages each give it a {@link MetricsSink}.
 *
 * Breaker metrics come from the breakers themselves (see `observe`), not from run events: several runs watching one
 * breaker each report its moves, and a breaker moves between runs too.
 */
export class RunMetrics {
  private readonly agentOfRun = new Map<string, string>();
  private readonly breakers = new Set<ObservedBreaker>();
  private readonly budgets = new Map<string, RetryBudget>();
  // Attribute sets are made once per label combination (a bounded set) and reused: no allocation per measurement.
  private readonly modelAttributes = new Map<string, ModelCallAttributes>();
  private readonly toolAttributes = new Map<
    string,
    { calls: MetricAttributes; duration: MetricAttributes }
  >();

  constructor(private readonly sink: MetricsSink) {}

  /** Subscribes to an agent's run events and to its breakers' moves, until the returned handle is disposed. */
  observe(agent: ObservableAgent): Disposable {
    const subscriptions: Disposable[] = [agent.onEvent((event) => this.handle(event))];
    const observed: ObservedBreaker[] = [];
    for (const [breakerName, breaker] of agent.breakers) {
      const target = breakerTarget(breakerName);
      const attributes = {
        'keel.agent.name': nameLabel(agent.name),
        'keel.breaker.name': nameLabel(target.name),
        'keel.dependency.kind': target.kind,
      };
      const entry = { breaker, attributes };
      this.breakers.add(entry);
      observed.push(entry);
      subscriptions.push(
        breaker.onStateChange((transition) => {
          this.sink.add(KEEL_METRICS.breakerTransitions, 1, {
            ...attributes,
            'keel.breaker.state': publicState(transition.to),
          });
        }),
      );
    }
    return {
      dispose: () => {
        for (const subscription of subscriptions) subscription.dispose();
        for (const entry of observed) this.breakers.delete(entry);
      },
    };
  }

  /** Reports how many retries `budget` (a budget shared by runs, such as the agent's `retry.budget`) still grants. */
  observeRetryBudget(name: string, budget: RetryBudget): Disposable {
    const label = nameLabel(name);
    this.budgets.set(label, budget);
    return {
      dispose: () => {
        if (this.budgets.get(label) === budget) this.budgets.delete(label);
      },
    };
  }

  /** The gauges' values now. Reading a breaker's state applies its time-driven moves that have fallen due. */
  gauges(): GaugeReading[] {
    const readings: GaugeReading[] = [];
    for (const { breaker, attributes } of this.breakers) {
      const state = publicState(breaker.state);
      for (const candidate of BREAKER_STATES) {
        readings.push({
          metric: KEEL_METRICS.breakerState,
          value: candidate === state ? 1 : 0,
          attributes: { ...attributes, 'keel.breaker.state': candidate },
        });
      }
    }
    for (const [name, budget] of this.budgets) {
      readings.push({
        metric: KEEL_METRICS.retryBudgetRemaining,
        value: budget.snapshot().remaining,
        attributes: { 'keel.retry_budget.name': name },
      });
    }
    return readings;
  }

  /** Measures one run event. */
  handle(event: RunEvent): void {
    const { sink } = this;
    switch (event.type) {
      case 'run-start':
      case 'run-resumed': {
        if (this.agentOfRun.has(event.runId)) return;
        const agent = nameLabel(event.agentName);
        this.agentOfRun.set(event.runId, agent);
        sink.add(KEEL_METRICS.runsActive, 1, { 'keel.agent.name': agent });
        return;
      }
      case 'run-end': {
        const agent = this.agentOfRun.get(event.runId);
        this.agentOfRun.delete(event.runId);
        const agentAttribute: MetricAttributes = agent === undefined ? {} : { 'keel.agent.name': agent };
        if (agent !== undefined) sink.add(KEEL_METRICS.runsActive, -1, agentAttribute);
        sink.add(KEEL_METRICS.runs, 1, {
          ...agentAttribute,
          'keel.run.status': event.status,
          'keel.run.stop_reason': event.stopReason,
        });
        sink.record(KEEL_METRICS.runDuration, event.durationMs / 1_000, {
          ...agentAttribute,
          'keel.run.status': event.status,
        });
        return;
      }
      case 'model-call-end':
        this.modelCallEnded(event);
        return;
      case 'retry-scheduled': {
        const code = errorType(event.errorCode);
        sink.add(KEEL_METRICS.retries, 1, {
          'keel.dependency.kind': event.target,
          'keel.dependency.name': nameLabel(event.name),
          'error.type': code,
        });
        if (event.target === 'store') sink.add(KEEL_METRICS.storeErrors, 1, { 'error.type': code });
        return;
      }
      case 'fallback-used':
        sink.add(KEEL_METRICS.fallbacks, 1, {
          'keel.fallback.from': nameLabel(event.from),
          'keel.fallback.to': nameLabel(event.to),
          'error.type': errorType(event.errorCode),
        });
        return;
      case 'tool-call-end': {
        const key = `${event.toolName}\u0000${event.status}\u0000${event.errorCode ?? ''}`;
        let attributes = this.toolAttributes.get(key);
        if (attributes === undefined) {
          const tool = { 'gen_ai.tool.name': nameLabel(event.toolName), 'keel.outcome': event.status };
          const calls =
            event.errorCode === undefined ? tool : { ...tool, 'error.type': errorType(event.errorCode) };
          attributes = { calls, duration: tool };
          this.toolAttributes.set(key, attributes);
        }
        sink.add(KEEL_METRICS.toolCalls, 1, attributes.calls);
        sink.record(KEEL_METRICS.toolDuration, event.durationMs / 1_000, attributes.duration);
        return;
      }
      case 'correction':
        sink.add(KEEL_METRICS.corrections, 1, { 'keel.correction.kind': event.kind });
        return;
      case 'guardrail-tripped':
        sink.add(KEEL_METRICS.guardrailTrips, 1, {
          'keel.guardrail.name': nameLabel(event.guardrail),
          'keel.guardrail.stage': event.stage,
          'keel.guardrail.action': event.action,
          'keel.guardrail.trigger': nameLabel(event.trigger),
        });
        return;
      case 'context-reduced':
        sink.add(KEEL_METRICS.contextReductions, 1, {});
        return;
      case 'checkpoint-saved':
      case 'checkpoint-failed': {
        const outcome = event.type === 'checkpoint-saved' ? 'success' : 'error';
        const code = event.type === 'checkpoint-failed' ? errorType(event.errorCode) : undefined;
        const transition = nameLabel(event.transition);
        sink.add(KEEL_METRICS.checkpoints, 1, {
          'keel.checkpoint.transition': transition,
          'keel.outcome': outcome,
          ...(code === undefined ? {} : { 'error.type': code }),
        });
        sink.record(KEEL_METRICS.checkpointDuration, event.durationMs / 1_000, {
          'keel.checkpoint.transition': transition,
          'keel.outcome': outcome,
        });
        if (code !== undefined) sink.add(KEEL_METRICS.storeErrors, 1, { 'error.type': code });
        return;
      }
      default:
        return;
    }
  }

  private modelCallEnded(event: Extract<RunEvent, { type: 'model-call-end' }>): void {
    const { sink } = this;
    const key = `${event.model}\u0000${event.responseModel ?? ''}\u0000${event.errorCode ?? ''}`;
    let attributes = this.modelAttributes.get(key);
    if (attributes === undefined) {
      attributes = modelCallAttributes(event);
      this.modelAttributes.set(key, attributes);
    }
    sink.add(KEEL_METRICS.modelRequests, 1, attributes.requests);
    sink.record(KEEL_METRICS.operationDuration, event.durationMs / 1_000, attributes.duration);
    if (event.usage !== undefined) {
      sink.record(KEEL_METRICS.tokenUsage, event.usage.inputTokens, attributes.inputTokens);
      sink.record(KEEL_METRICS.tokenUsage, event.usage.outputTokens, attributes.outputTokens);
    }
  }
}

/** The attribute sets of a model call's measurements. */
interface ModelCallAttributes {
  readonly requests: MetricAttributes;
  readonly duration: MetricAttributes;
  readonly inputTokens: MetricAttributes;
  readonly outputTokens: MetricAttributes;
}

function modelCallAttributes(event: Extract<RunEvent, { type: 'model-call-end' }>): ModelCallAttributes {
  const { provider, model } = modelParts(event.model);
  const code: MetricAttributes =
    event.errorCode === undefined ? {} : { 'error.type': errorType(event.errorCode) };
  const genAi: MetricAttributes = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': nameLabel(provider),
    'gen_ai.request.model': nameLabel(model),
    ...(event.responseModel === undefined ? {} : { 'gen_ai.response.model': nameLabel(event.responseModel) }),
  };
  return {
    requests: { 'keel.model': nameLabel(event.model), 'keel.outcome': event.outcome, ...code },
    duration: { ...genAi, ...code },
    inputTokens: { ...genAi, 'gen_ai.token.type': 'input' },
    outputTokens: { ...genAi, 'gen_ai.token.type': 'output' },
  };
}

/** An isolated breaker rejects calls like an open one: operators see it as open. */
function publicState(state: CircuitBreaker['state']): (typeof BREAKER_STATES)[number] {
  return state === 'isolated' ? 'open' : state;
}
