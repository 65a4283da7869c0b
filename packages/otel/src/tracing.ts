import type { Agent, Disposable, FinishReason, RunAnnotations, RunEvent, RunEventListener } from '@keel/core';
import { rejectUnknownOptions, requireOptionsObject, throwOptionError } from '@keel/core/adapter';
import {
  errorType,
  LABEL_BOUNDS_OPTIONS,
  LabelBounds,
  type LabelBoundsOptions,
  type TraceIds,
} from '@keel/telemetry';
import {
  type Attributes,
  type Context,
  context as contextApi,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { type ContentRecording, inputMessages, outputMessages, recordedText } from './genai-messages.js';
import { RunTrace } from './run-trace.js';
import { SpanEndBuffer } from './span-end-buffer.js';
import { addSpanEvent } from './span-events.js';
import { SpanTargets } from './span-targets.js';
import { parseTraceparent, traceHeadersOf, traceIdsOf, traceparentOf } from './trace-headers.js';

/** The instrumentation scope's name: what spans and metrics are attributed to. */
export const INSTRUMENTATION_NAME = '@keel/otel';
/** The instrumentation scope's version. */
export const INSTRUMENTATION_VERSION = '0.1.0';

/**
 * Options of {@link keelTracing}. `secrets` (the values of your API keys, whatever their shape) are removed from
 * recorded content, response models and tool names, on top of the credential patterns of `redactSecrets`;
 * `maxResponseModels` bounds `gen_ai.response.model` as for metrics and `maxToolNames` bounds the tool names in span
 * names (`execute_tool <tool>`; `gen_ai.tool.name` keeps the name): see `LabelBoundsOptions` of `@keel/telemetry`.
 */
export interface KeelTracingOptions extends LabelBoundsOptions {
  /** Where spans go. Defaults to the global tracer provider's tracer `@keel/otel` (a no-op until an SDK registers). */
  tracer?: Tracer;
  /**
   * Records contents, each text redacted (the `secrets` given, then `redactSecrets`' patterns):
   * `gen_ai.input.messages` and `gen_ai.output.messages` on `chat` spans, `gen_ai.tool.call.arguments` and
   * `gen_ai.tool.call.result` on `execute_tool` spans, correction and progress messages on their events. Contents
   * may hold personal data: opt in knowingly. Defaults to false.
   */
  recordContent?: boolean;
  /** Longest recorded text (one message's content, one tool's arguments), in characters; longer is cut. Defaults to 16_384. */
  maxContentChars?: number;
}

/**
 * The run annotation (see `RunAnnotations`) that keeps the `traceparent` of each attempt's `invoke_agent` span,
 * space-separated, the latest {@link MAX_LINKED_ATTEMPTS}: saved with the run's checkpoints, so that a resumption in
 * any process links to them.
 */
export const ATTEMPTS_ANNOTATION = 'otel.attempts';
/** Most earlier attempts a resumed run's span links to (the latest ones). */
export const MAX_LINKED_ATTEMPTS = 8;

/** A call of a tool, as its `ToolContext` names it. */
export interface ToolCallRef {
  readonly runId: string;
  readonly idempotencyKey: string;
}

/** Turns keel run events into OpenTelemetry spans that follow the GenAI semantic conventions. */
export interface KeelTracing {
  /** Traces every run of `agent` until the returned handle is disposed. */
  observe(agent: Pick<Agent<unknown>, 'onEvent'>): Disposable;
  /** The listener itself, for `agent({ onEvent })` or `run(input, { onEvent })`. */
  readonly onEvent: RunEventListener;
  /** The context of a tool call's `execute_tool` span while it runs (run the tool's work in it), or undefined. */
  contextOf(call: ToolCallRef): Context | undefined;
  /**
   * W3C trace-context headers (`traceparent`, and `tracestate` when set) that put what a tool call sends (an HTTP
   * request, an MCP message's `_meta`) under its `execute_tool` span. Empty when the call is not traced.
   */
  traceHeaders(call: ToolCallRef): Record<string, string>;
  /** The ids of the span a run event belongs to, for logs (see `@keel/logs`). */
  traceIdsOf(event: RunEvent): TraceIds | undefined;
}

const KNOWN_OPTIONS = ['tracer', 'recordContent', 'maxContentChars', ...LABEL_BOUNDS_OPTIONS];

/**
 * Traces runs with spans that follow the OpenTelemetry GenAI semantic conventions, on `@opentelemetry/api` alone
 * (the SDK and its exporters are the application's choice):
 *
 * - `invoke_agent <agent>` (INTERNAL) for a run, a child of the context active when the run started; a child run
 *   (an agent tool's, a handoff's) is a child of the parent's `execute_tool` span of the call that started it, in the
 *   same trace, when the same tracing observes both agents; a resumed run
 *   gets a new span, linked to the spans of its earlier attempts (their `traceparent` is kept in the run's
 *   annotations, saved with its checkpoints, so the link holds across processes);
 * - `chat <model>` (CLIENT) for each upstream model request, one per attempt, so retries are visible;
 * - `execute_tool <tool>` (INTERNAL) for each tool call, retries of the call included;
 * - `error.type` set to the keel error code; span events for retries, fallbacks, breaker moves, corrections,
 *   guardrail trips, context reductions and interruptions.
 *
 * Span times come from the events (the agent's clock). Message contents are not recorded unless `recordContent`.
 *
 * @example
 *   const tracing = keelTracing();
 *   tracing.observe(assistant);
 *   await assistant.run('Weather in Paris?');
 */
export function keelTracing(options: KeelTracingOptions = {}): KeelTracing {
  requireOptionsObject(options, { where: 'keelTracing' });
  rejectUnknownOptions(options, KNOWN_OPTIONS, { where: 'keelTracing' });
  const tracer = options.tracer ?? trace.getTracer(INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION);
  if (typeof tracer?.startSpan !== 'function')
    throwOptionError({
      where: 'keelTracing',
      option: 'tracer',
      message: 'tracer must be an OpenTelemetry Tracer',
    });
  const recordContent = options.recordContent ?? false;
  if (typeof recordContent !== 'boolean')
    throwOptionError({
      where: 'keelTracing',
      option: 'recordContent',
      message: 'recordContent must be a boolean',
    });
  const maxContentChars = positiveInteger(options.maxContentChars ?? 16_384, 'maxContentChars');
  const bounds = new LabelBounds(options, 'keelTracing');
  const redact = bounds.redactor.text;
  const recording: ContentRecording = { maxChars: maxContentChars, redact };
  const runs = new Map<string, RunTrace>();
  // The span of the event handled last: a listener after this one (the logs) asks for it with the same event.
  let lastEvent: RunEvent | undefined;
  let lastSpan: Span | undefined;
  // Names and attributes that depend only on a model or a tool (a bounded set), made once each.
  const targets = new SpanTargets(bounds);
  // Ends of chat and tool spans, handed to the SDK together (at a run's end at the latest).
  const ends = new SpanEndBuffer();

  /** A child run's parent: the `execute_tool` span of the call that started it, when this tracing traces that call. */
  const callContextOf = (
    event: Extract<RunEvent, { type: 'run-start' | 'run-resumed' }>,
  ): Context | undefined =>
    event.parentRunId === undefined || event.parentCallKey === undefined
      ? undefined
      : contextOf({ runId: event.parentRunId, idempotencyKey: event.parentCallKey });

  const contextOf = (call: ToolCallRef): Context | undefined => {
    const run = runs.get(call.runId);
    const entry = run?.tools.get(call.idempotencyKey);
    if (run === undefined || entry === undefined) return undefined;
    entry.context ??= trace.setSpan(run.context, entry.span);
    return entry.context;
  };

  const startRun = (event: Extract<RunEvent, { type: 'run-start' | 'run-resumed' }>): RunTrace => {
    const previous = runs.get(event.runId);
    if (previous !== undefined) {
      ends.flush();
      previous.root.end(event.atMs);
    }
    const parent = callContextOf(event) ?? contextApi.active();
    const earlier = attemptsOf(event.annotations);
    const links =
      earlier.length === 0
        ? undefined
        : earlier.flatMap((traceparent) => {
            const spanContext = parseTraceparent(traceparent);
            return spanContext === undefined
              ? []
              : [{ context: spanContext, attributes: { 'keel.link': 'earlier_attempt' } }];
          });
    const attributes: Attributes = {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': event.agentName,
      'keel.run.id': event.runId,
    };
    if (event.type === 'run-resumed') {
      attributes['keel.run.resumed'] = true;
      attributes['keel.run.step'] = event.step;
    }
    const root = tracer.startSpan(
      `invoke_agent ${event.agentName}`,
      { kind: SpanKind.INTERNAL, startTime: event.atMs, attributes, links },
      parent,
    );
    const traceparent = traceparentOf(root.spanContext());
    event.annotations[ATTEMPTS_ANNOTATION] =
      earlier.length === 0 ? traceparent : [...earlier, traceparent].slice(-MAX_LINKED_ATTEMPTS).join(' ');
    const run = new RunTrace(root, trace.setSpan(parent, root), event.agentName);
    runs.set(event.runId, run);
    return run;
  };

  const cutShort = (span: Span, failure: string | undefined, atMs: number): void => {
    span.setAttribute('error.type', failure ?? 'run.cancelled');
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'the run ended while this was in flight' });
    ends.end(span, atMs);
  };

  const endRun = (run: RunTrace, event: Extract<RunEvent, { type: 'run-end' }>): void => {
    const { root } = run;
    const code = event.error?.code;
    const failure = code === undefined ? undefined : errorType(code);
    // A call the run's end cut short (cancellation, timeout) has no end event of its own.
    if (run.chat !== undefined) cutShort(run.chat, failure, event.atMs);
    for (const entry of run.tools.values()) cutShort(entry.span, failure, event.atMs);
    ends.flush();
    root.setAttribute('keel.run.status', event.status);
    root.setAttribute('keel.run.stop_reason', event.stopReason);
    root.setAttribute('gen_ai.usage.input_tokens', run.inputTokens);
    root.setAttribute('gen_ai.usage.output_tokens', run.outputTokens);
    if (event.status === 'interrupted') {
      root.addEvent(
        'keel.interrupted',
        {
          'keel.run.stop_reason': event.stopReason,
          ...(failure === undefined ? {} : { 'error.type': failure }),
        },
        event.atMs,
      );
    }
    if (failure !== undefined && (event.status === 'failed' || event.status === 'cancelled')) {
      root.setAttribute('error.type', failure);
      root.setStatus({ code: SpanStatusCode.ERROR, message: failure });
    }
    root.end(event.atMs);
    runs.delete(event.runId);
  };

  /** Handles one event; returns the span it belongs to. */
  const handle = (event: RunEvent): Span | undefined => {
    if (event.type === 'run-start' || event.type === 'run-resumed') return startRun(event).root;
    const run = runs.get(event.runId);
    if (run === undefined) return undefined;
    const { root } = run;
    switch (event.type) {
      case 'run-end':
        endRun(run, event);
        return root;
      case 'model-call-start': {
        const target = targets.model(event.model);
        if (run.chat !== undefined) ends.end(run.chat, event.atMs);
        if (!run.modelNamed) {
          run.modelNamed = true;
          root.setAttributes(target.rootAttributes);
        }
        const span = tracer.startSpan(
          target.spanName,
          { kind: SpanKind.CLIENT, startTime: event.atMs, attributes: target.startAttributes },
          run.context,
        );
        run.chat = span;
        // Set after the start, and only on a span that records: what a sampler does not read is not copied and
        // checked twice by the SDK's start, nor built for a span that drops it. The run id is on the run's span,
        // this span's parent: a child repeats nothing its trace already says.
        if (span.isRecording()) {
          span.setAttribute('keel.run.step', event.step);
          span.setAttribute('keel.attempt', event.attempt);
          if (recordContent)
            span.setAttribute('gen_ai.input.messages', inputMessages(event.messages, recording));
        }
        return run.chat;
      }
      case 'model-call-end': {
        const span = run.chat;
        if (span === undefined) return root;
        run.chat = undefined;
        if (event.usage !== undefined) {
          run.inputTokens += event.usage.inputTokens;
          run.outputTokens += event.usage.outputTokens;
        }
        // A span that records nothing (no SDK, or sampled out) is not worth building attributes for.
        if (span.isRecording()) setChatEnd(span, event, bounds, recordContent ? recording : undefined);
        if (event.outcome === 'error') fail(span, event.errorCode ?? '_OTHER');
        ends.end(span, event.atMs);
        return span;
      }
      case 'tool-call-start': {
        const target = targets.tool(run.agentName, event.toolName);
        const span = tracer.startSpan(
          target.spanName,
          { kind: SpanKind.INTERNAL, startTime: event.atMs, attributes: target.startAttributes },
          run.context,
        );
        if (span.isRecording()) {
          span.setAttribute('gen_ai.tool.call.id', event.toolCallId);
          span.setAttribute('keel.run.step', event.step);
          span.setAttribute('keel.tool.call_index', event.callIndex);
          span.setAttribute('keel.tool.idempotency_key', event.idempotencyKey);
          if (recordContent)
            span.setAttribute('gen_ai.tool.call.arguments', recordedText(event.arguments, recording));
        }
        run.tools.set(event.idempotencyKey, { span, toolName: event.toolName });
        return span;
      }
      case 'tool-call-end': {
        const entry = run.tools.get(event.idempotencyKey);
        if (entry === undefined) return root;
        run.tools.delete(event.idempotencyKey);
        if (event.status === 'error') fail(entry.span, event.errorCode ?? '_OTHER');
        else if (recordContent && event.result.status === 'success') {
          entry.span.setAttribute(
            'gen_ai.tool.call.result',
            recordedText(JSON.stringify(event.result.content), recording),
          );
        }
        ends.end(entry.span, event.atMs);
        return entry.span;
      }
      default:
        return addSpanEvent(run, event, redact, recordContent ? recording : undefined);
    }
  };

  const onEvent: RunEventListener = (event) => {
    lastSpan = handle(event);
    lastEvent = event;
    ends.flushIfDue(event.atMs);
  };

  const toolSpanContext = (call: ToolCallRef): SpanContext | undefined =>
    runs.get(call.runId)?.tools.get(call.idempotencyKey)?.span.spanContext();

  return {
    observe: (agent) => agent.onEvent(onEvent),
    onEvent,
    contextOf,
    traceHeaders: (call) => {
      const spanContext = toolSpanContext(call);
      return spanContext === undefined ? {} : traceHeadersOf(spanContext);
    },
    traceIdsOf: (event) => {
      if (event === lastEvent) return lastSpan === undefined ? undefined : traceIdsOf(lastSpan.spanContext());
      const run = runs.get(event.runId);
      if (run === undefined) return undefined;
      let span: Span = run.root;
      if ((event.type === 'model-call-start' || event.type === 'model-call-end') && run.chat !== undefined)
        span = run.chat;
      if (event.type === 'tool-call-start' || event.type === 'tool-call-end')
        span = run.tools.get(event.idempotencyKey)?.span ?? run.root;
      return traceIdsOf(span.spanContext());
    },
  };
}

/** `gen_ai.response.finish_reasons` for each finish reason, made once (the SDK copies arrays it is given). */
const FINISH_REASONS = new Map<FinishReason, readonly string[]>();

/**
 * Sets what a `chat` span learns at its end, one attribute at a time (no object is built per call for the SDK to walk
 * again); contents when `recording` is given.
 */
function setChatEnd(
  span: Span,
  event: Extract<RunEvent, { type: 'model-call-end' }>,
  bounds: LabelBounds,
  recording: ContentRecording | undefined,
): void {
  if (event.finishReason !== undefined) {
    let reasons = FINISH_REASONS.get(event.finishReason);
    if (reasons === undefined) {
      reasons = Object.freeze([event.finishReason]);
      FINISH_REASONS.set(event.finishReason, reasons);
    }
    span.setAttribute('gen_ai.response.finish_reasons', reasons as string[]);
  }
  if (event.usage !== undefined) {
    span.setAttribute('gen_ai.usage.input_tokens', event.usage.inputTokens);
    span.setAttribute('gen_ai.usage.output_tokens', event.usage.outputTokens);
  }
  if (event.responseModel !== undefined)
    span.setAttribute('gen_ai.response.model', bounds.responseModel(event.model, event.responseModel));
  if (event.requestId !== undefined)
    span.setAttribute('keel.request.id', bounds.redactor.text(event.requestId));
  if (recording !== undefined && event.outcome === 'success') {
    span.setAttribute(
      'gen_ai.output.messages',
      outputMessages(event.content ?? '', event.toolCalls ?? [], event.finishReason, recording),
    );
  }
}

/** The `traceparent` of each earlier attempt, as the run's annotations keep them. */
function attemptsOf(annotations: RunAnnotations): string[] {
  const kept = annotations[ATTEMPTS_ANNOTATION];
  return kept === undefined || kept === '' ? [] : kept.split(' ').filter((entry) => entry !== '');
}

function fail(span: Span, code: string): void {
  const type = errorType(code);
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: type });
}

function positiveInteger(value: unknown, name: string): number {
  if (!Number.isInteger(value) || (value as number) < 1)
    throwOptionError({
      where: 'keelTracing',
      option: 'options',
      message: `${name} must be a positive integer`,
    });
  return value as number;
}
