import type { Agent, CircuitBreaker, Disposable, RetryBudget, RunEvent, RunEventListener } from '@keel/core';
import { CounterTable, KeyedByThree, type MetricAttributes, type MetricReading } from './counter-table.js';
import { LabelBounds } from './label-bounds.js';
import { breakerTarget, errorType, modelParts, nameLabel } from './label-values.js';
import { KEEL_METRICS, type MetricDefinition } from './metric-catalogue.js';

/**
 * Records one histogram measurement. `attributes` is frozen and the same object for every measurement of one label
 * combination, so a sink may cache what it derives from it (by identity).
 */
export type HistogramRecorder = (value: number, attributes: MetricAttributes) => void;

/**
 * Where measurements go: an OpenTelemetry meter, a prom-client registry. Histograms are recorded as they happen;
 * counters and gauges are summed and read by {@link RunMetrics} itself, and a sink reports them when metrics are
 * collected (`counters()`, `gauges()`).
 */
export interface MetricsSink {
  /** The recorder of one histogram of the catalogue; asked once per histogram, when the `RunMetrics` is made. */
  histogram(metric: MetricDefinition): HistogramRecorder;
}

/** What {@link RunMetrics.observe} needs of an agent. */
export type ObservableAgent = Pick<Agent<unknown>, 'name' | 'onEvent' | 'breakers'>;

const BREAKER_STATES = ['closed', 'open', 'half-open'] as const;

/** The key of model-call series whose response named no model (no label is a lone NUL). */
const NO_RESPONSE_MODEL = '\u0000';

interface ObservedBreaker {
  readonly breaker: CircuitBreaker;
  /** The gauge's attributes for each state, made once. */
  readonly stateAttributes: Readonly<Record<(typeof BREAKER_STATES)[number], MetricAttributes>>;
}

/** The series a model call's end measures, for one model, response model and error code. */
interface ModelCallSeries {
  readonly requests: { value: number };
  readonly duration: MetricAttributes;
  readonly inputTokens: MetricAttributes;
  readonly outputTokens: MetricAttributes;
}

/** The series a tool call's end measures, for one tool, outcome and error code. */
interface ToolCallSeries {
  readonly calls: { value: number };
  readonly duration: MetricAttributes;
}

/** The series a run's end measures, for one agent, status and stop reason. */
interface RunSeries {
  readonly runs: { value: number };
  readonly duration: MetricAttributes;
}

/** The series a checkpoint measures, for one transition, outcome and error code. */
interface CheckpointSeries {
  readonly checkpoints: { value: number };
  readonly duration: MetricAttributes;
  readonly storeErrors: { value: number } | undefined;
}

/**
 * Turns run events into measurements of {@link KEEL_METRICS}. Vendor-neutral: the OpenTelemetry and Prometheus
 * packages each give it a {@link MetricsSink}. Counters are summed here and reported when metrics are collected,
 * which costs a step an addition where a metrics library would hash the attributes of every measurement; the series
 * of each label combination, and the attributes of each histogram measurement, are made once and reused.
 *
 * Breaker metrics come from the breakers themselves (see `observe`), not from run events: several runs watching one
 * breaker each report its moves, and a breaker moves between runs too.
 *
 * Values from outside the configuration are bounded and redacted by `bounds` (see `LabelBounds`): the response
 * model (the requested one, else the first few per requested model, else `_OTHER`) and tool names (the first
 * `maxToolNames` per agent, else `_OTHER`).
 */
export class RunMetrics {
  private readonly counterTable = new CounterTable();
  private readonly agentOfRun = new Map<string, string>();
  /** The `keel.tenant` label of each run going on. */
  private readonly tenantOfRun = new Map<string, string>();
  /** `keel.model.cost` series by model and tenant label. */
  private readonly costSeries = new Map<string, Map<string, { value: number }>>();
  private readonly breakers = new Set<ObservedBreaker>();
  private readonly budgets = new Map<string, RetryBudget>();
  private readonly modelSeries = new KeyedByThree<ModelCallSeries>();
  private readonly toolSeries = new KeyedByThree<ToolCallSeries>();
  private readonly checkpointSeries = new KeyedByThree<CheckpointSeries>();
  private readonly runSeries = new KeyedByThree<RunSeries>();
  private readonly activeSeries = new Map<string, { value: number }>();
  private readonly recordOperationDuration: HistogramRecorder;
  private readonly recordTokenUsage: HistogramRecorder;
  private readonly recordRunDuration: HistogramRecorder;
  private readonly recordToolDuration: HistogramRecorder;
  private readonly recordCheckpointDuration: HistogramRecorder;

  /** `bounds` bound and redact the labels that come from outside the configuration. Defaults to `new LabelBounds()`. */
  constructor(
    sink: MetricsSink,
    private readonly bounds: LabelBounds = new LabelBounds(),
  ) {
    this.recordOperationDuration = sink.histogram(KEEL_METRICS.operationDuration);
    this.recordTokenUsage = sink.histogram(KEEL_METRICS.tokenUsage);
    this.recordRunDuration = sink.histogram(KEEL_METRICS.runDuration);
    this.recordToolDuration = sink.histogram(KEEL_METRICS.toolDuration);
    this.recordCheckpointDuration = sink.histogram(KEEL_METRICS.checkpointDuration);
  }

  /**
   * Subscribes to an agent's run events and to its breakers' moves, until the returned handle is disposed. `listener`
   * is what is subscribed to the run events: a sink that does more per event than {@link RunMetrics.handle} passes
   * one listener that calls `handle` and does the rest, so that an event costs one listener call. Defaults to
   * `handle` alone.
   */
  observe(agent: ObservableAgent, listener: RunEventListener = (event) => this.handle(event)): Disposable {
    const subscriptions: Disposable[] = [agent.onEvent(listener)];
    const observed: ObservedBreaker[] = [];
    for (const [breakerName, breaker] of agent.breakers) {
      const target = breakerTarget(breakerName);
      const attributes = {
        'keel.agent.name': nameLabel(agent.name),
        'keel.breaker.name': nameLabel(target.name),
        'keel.dependency.kind': target.kind,
      };
      const stateAttributes = {
        closed: Object.freeze({ ...attributes, 'keel.breaker.state': 'closed' }),
        open: Object.freeze({ ...attributes, 'keel.breaker.state': 'open' }),
        'half-open': Object.freeze({ ...attributes, 'keel.breaker.state': 'half-open' }),
      };
      const entry: ObservedBreaker = { breaker, stateAttributes };
      this.breakers.add(entry);
      observed.push(entry);
      subscriptions.push(
        breaker.onStateChange((transition) => {
          this.counterTable.add(
            KEEL_METRICS.breakerTransitions,
            1,
            stateAttributes[publicState(transition.to)],
          );
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

  /** Every counter's and up-down counter's series, with its total so far (read them when metrics are collected). */
  counters(): IterableIterator<MetricReading> {
    return this.counterTable.values();
  }

  /** The gauges' values now. Reading a breaker's state applies its time-driven moves that have fallen due. */
  gauges(): MetricReading[] {
    const readings: MetricReading[] = [];
    for (const { breaker, stateAttributes } of this.breakers) {
      const state = publicState(breaker.state);
      for (const candidate of BREAKER_STATES) {
        readings.push({
          metric: KEEL_METRICS.breakerState,
          value: candidate === state ? 1 : 0,
          attributes: stateAttributes[candidate],
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
    switch (event.type) {
      case 'model-call-end':
        this.modelCallEnded(event);
        return;
      case 'tool-call-end':
        this.toolCallEnded(event);
        return;
      case 'checkpoint-saved':
      case 'checkpoint-failed':
        this.checkpointWritten(event);
        return;
      case 'run-start':
      case 'run-resumed': {
        if (this.agentOfRun.has(event.runId)) return;
        const agent = nameLabel(event.agentName);
        this.agentOfRun.set(event.runId, agent);
        this.tenantOfRun.set(event.runId, this.bounds.tenant(event.tenant));
        this.activeRuns(agent).value += 1;
        return;
      }
      case 'run-end':
        this.runEnded(event);
        return;
      case 'retry-scheduled': {
        const code = errorType(event.errorCode);
        this.counterTable.add(KEEL_METRICS.retries, 1, {
          'keel.dependency.kind': event.target,
          'keel.dependency.name':
            event.target === 'tool'
              ? this.bounds.toolName(this.agentOfRun.get(event.runId) ?? '', event.name)
              : nameLabel(event.name),
          'error.type': code,
        });
        if (event.target === 'store')
          this.counterTable.add(KEEL_METRICS.storeErrors, 1, { 'error.type': code });
        return;
      }
      case 'fallback-used':
        this.counterTable.add(KEEL_METRICS.fallbacks, 1, {
          'keel.fallback.from': nameLabel(event.from),
          'keel.fallback.to': nameLabel(event.to),
          'error.type': errorType(event.errorCode),
        });
        return;
      case 'correction':
        this.counterTable.add(KEEL_METRICS.corrections, 1, { 'keel.correction.kind': event.kind });
        return;
      case 'guardrail-tripped':
        this.counterTable.add(KEEL_METRICS.guardrailTrips, 1, {
          'keel.guardrail.name': nameLabel(event.guardrail),
          'keel.guardrail.stage': event.stage,
          'keel.guardrail.action': event.action,
          'keel.guardrail.trigger': nameLabel(event.trigger),
        });
        return;
      case 'context-reduced':
        this.counterTable.add(KEEL_METRICS.contextReductions, 1, {});
        return;
      default:
        return;
    }
  }

  private runEnded(event: Extract<RunEvent, { type: 'run-end' }>): void {
    const agent = this.agentOfRun.get(event.runId);
    this.agentOfRun.delete(event.runId);
    this.tenantOfRun.delete(event.runId);
    if (agent !== undefined) this.activeRuns(agent).value -= 1;
    // A run whose start was not seen (observed mid-run) is counted without its agent.
    const agentKey = agent === undefined ? '' : `=${agent}`;
    let series = this.runSeries.get(agentKey, event.status, event.stopReason);
    if (series === undefined) {
      const agentAttribute: MetricAttributes = agent === undefined ? {} : { 'keel.agent.name': agent };
      series = {
        runs: this.counterTable.series(KEEL_METRICS.runs, {
          ...agentAttribute,
          'keel.run.status': event.status,
          'keel.run.stop_reason': event.stopReason,
        }),
        duration: Object.freeze({ ...agentAttribute, 'keel.run.status': event.status }),
      };
      this.runSeries.set(agentKey, event.status, event.stopReason, series);
    }
    series.runs.value += 1;
    this.recordRunDuration(event.durationMs / 1_000, series.duration);
  }

  /** The `keel.runs.active` series of an agent. */
  private activeRuns(agent: string): { value: number } {
    let series = this.activeSeries.get(agent);
    if (series === undefined) {
      series = this.counterTable.series(KEEL_METRICS.runsActive, { 'keel.agent.name': agent });
      this.activeSeries.set(agent, series);
    }
    return series;
  }

  private modelCallEnded(event: Extract<RunEvent, { type: 'model-call-end' }>): void {
    const responseModel =
      event.responseModel === undefined
        ? undefined
        : this.bounds.responseModel(event.model, event.responseModel);
    const code = event.errorCode ?? '';
    // Keyed by the label, not the reported value: a provider naming a new model in every response makes no series.
    const responseKey = responseModel ?? NO_RESPONSE_MODEL;
    let series = this.modelSeries.get(event.model, responseKey, code);
    if (series === undefined) {
      series = this.modelCallSeries(event, responseModel);
      this.modelSeries.set(event.model, responseKey, code, series);
    }
    series.requests.value += 1;
    this.recordOperationDuration(event.durationMs / 1_000, series.duration);
    if (event.usage !== undefined) {
      this.recordTokenUsage(event.usage.inputTokens, series.inputTokens);
      this.recordTokenUsage(event.usage.outputTokens, series.outputTokens);
    }
    if (event.costUsd !== undefined) this.costOf(event.model, event.runId).value += event.costUsd;
  }

  /** The `keel.model.cost` series of a model, for the tenant of a run. */
  private costOf(model: string, runId: string): { value: number } {
    const tenant = this.tenantOfRun.get(runId) ?? this.bounds.tenant(undefined);
    let byTenant = this.costSeries.get(model);
    if (byTenant === undefined) {
      byTenant = new Map();
      this.costSeries.set(model, byTenant);
    }
    let series = byTenant.get(tenant);
    if (series === undefined) {
      series = this.counterTable.series(KEEL_METRICS.modelCost, {
        'keel.model': nameLabel(model),
        'keel.tenant': tenant,
      });
      byTenant.set(tenant, series);
    }
    return series;
  }

  private modelCallSeries(
    event: Extract<RunEvent, { type: 'model-call-end' }>,
    responseModel: string | undefined,
  ): ModelCallSeries {
    const { provider, model } = modelParts(event.model);
    const code: MetricAttributes =
      event.errorCode === undefined ? {} : { 'error.type': errorType(event.errorCode) };
    const genAi: MetricAttributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': nameLabel(provider),
      'gen_ai.request.model': nameLabel(model),
      ...(responseModel === undefined ? {} : { 'gen_ai.response.model': responseModel }),
    };
    return {
      requests: this.counterTable.series(KEEL_METRICS.modelRequests, {
        'keel.model': nameLabel(event.model),
        'keel.outcome': event.outcome,
        ...code,
      }),
      duration: Object.freeze({ ...genAi, ...code }),
      inputTokens: Object.freeze({ ...genAi, 'gen_ai.token.type': 'input' }),
      outputTokens: Object.freeze({ ...genAi, 'gen_ai.token.type': 'output' }),
    };
  }

  private toolCallEnded(event: Extract<RunEvent, { type: 'tool-call-end' }>): void {
    const toolName = this.bounds.toolName(
      this.agentOfRun.get(event.runId) ?? '',
      event.toolName,
      event.errorCode,
    );
    const code = event.errorCode ?? '';
    let series = this.toolSeries.get(toolName, event.status, code);
    if (series === undefined) {
      const tool = { 'gen_ai.tool.name': toolName, 'keel.outcome': event.status };
      series = {
        calls: this.counterTable.series(
          KEEL_METRICS.toolCalls,
          event.errorCode === undefined ? tool : { ...tool, 'error.type': errorType(event.errorCode) },
        ),
        duration: Object.freeze(tool),
      };
      this.toolSeries.set(toolName, event.status, code, series);
    }
    series.calls.value += 1;
    this.recordToolDuration(event.durationMs / 1_000, series.duration);
  }

  private checkpointWritten(
    event: Extract<RunEvent, { type: 'checkpoint-saved' | 'checkpoint-failed' }>,
  ): void {
    const failure = event.type === 'checkpoint-failed' ? event.errorCode : '';
    let series = this.checkpointSeries.get(event.transition, event.type, failure);
    if (series === undefined) {
      const code = event.type === 'checkpoint-failed' ? errorType(event.errorCode) : undefined;
      const base = {
        'keel.checkpoint.transition': nameLabel(event.transition),
        'keel.outcome': code === undefined ? 'success' : 'error',
      };
      series = {
        checkpoints: this.counterTable.series(
          KEEL_METRICS.checkpoints,
          code === undefined ? base : { ...base, 'error.type': code },
        ),
        duration: Object.freeze(base),
        storeErrors:
          code === undefined
            ? undefined
            : this.counterTable.series(KEEL_METRICS.storeErrors, { 'error.type': code }),
      };
      this.checkpointSeries.set(event.transition, event.type, failure, series);
    }
    series.checkpoints.value += 1;
    if (series.storeErrors !== undefined) series.storeErrors.value += 1;
    this.recordCheckpointDuration(event.durationMs / 1_000, series.duration);
  }
}

/** An isolated breaker rejects calls like an open one: operators see it as open. */
function publicState(state: CircuitBreaker['state']): (typeof BREAKER_STATES)[number] {
  return state === 'isolated' ? 'open' : state;
}
