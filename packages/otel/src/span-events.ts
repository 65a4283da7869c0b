import type { RunEvent } from '@keel/core';
import { errorType } from '@keel/telemetry';
import type { Span } from '@opentelemetry/api';
import { type ContentRecording, recordedText } from './genai-messages.js';
import type { RunTrace } from './run-trace.js';

/**
 * Adds what a run event that opens or closes no span says as a span event (`keel.retry`, `keel.fallback`,
 * `keel.handoff`, breaker moves, corrections, guardrail trips, progress, checkpoint failures, context reductions):
 * on the call's `execute_tool` span when the event belongs to one tool call, else on the run's `invoke_agent` span.
 * Returns the span it went to. Contents (progress and correction messages) only when `recording` is given.
 */
export function addSpanEvent(
  run: RunTrace,
  event: RunEvent,
  redact: (text: string) => string,
  recording: ContentRecording | undefined,
): Span {
  const { root } = run;
  switch (event.type) {
    case 'tool-call-progress': {
      const span = run.tools.get(event.idempotencyKey)?.span ?? root;
      span.addEvent(
        'keel.tool.progress',
        {
          'keel.tool.progress': event.progress,
          ...(event.total === undefined ? {} : { 'keel.tool.progress_total': event.total }),
          ...(recording !== undefined && event.message !== undefined
            ? { 'keel.tool.progress_message': recordedText(event.message, recording) }
            : {}),
        },
        event.atMs,
      );
      return span;
    }
    case 'retry-scheduled': {
      const target = event.target === 'tool' ? (run.onlyCallOf(event.name)?.span ?? root) : root;
      target.addEvent(
        'keel.retry',
        {
          'keel.dependency.kind': event.target,
          'keel.dependency.name': event.target === 'tool' ? redact(event.name) : event.name,
          'keel.retry.attempt': event.attempt,
          'keel.retry.delay_ms': event.delayMs,
          'error.type': errorType(event.errorCode),
          'keel.run.step': event.step,
        },
        event.atMs,
      );
      return target;
    }
    case 'fallback-used':
      root.addEvent(
        'keel.fallback',
        {
          'keel.fallback.from': event.from,
          'keel.fallback.to': event.to,
          'error.type': errorType(event.errorCode),
          'keel.run.step': event.step,
        },
        event.atMs,
      );
      return root;
    case 'breaker-opened':
    case 'breaker-half-opened':
    case 'breaker-closed':
      root.addEvent(
        `keel.${event.type.replace('-', '.').replace('half-opened', 'half_opened')}`,
        { 'keel.dependency.kind': event.target, 'keel.breaker.name': event.name },
        event.atMs,
      );
      return root;
    case 'correction':
      root.addEvent(
        'keel.correction',
        {
          'keel.correction.kind': event.kind,
          'keel.run.step': event.step,
          ...(event.toolName === undefined ? {} : { 'gen_ai.tool.name': redact(event.toolName) }),
          ...(recording !== undefined
            ? { 'keel.correction.message': recordedText(event.message, recording) }
            : {}),
        },
        event.atMs,
      );
      return root;
    case 'guardrail-tripped':
      root.addEvent(
        'keel.guardrail',
        {
          'keel.guardrail.name': event.guardrail,
          'keel.guardrail.stage': event.stage,
          'keel.guardrail.action': event.action,
          'keel.guardrail.trigger': event.trigger,
        },
        event.atMs,
      );
      return root;
    case 'checkpoint-failed':
      root.addEvent(
        'keel.checkpoint.failed',
        {
          'keel.checkpoint.transition': event.transition,
          'error.type': errorType(event.errorCode),
          'keel.run.step': event.step,
        },
        event.atMs,
      );
      return root;
    case 'context-reduced':
      root.addEvent(
        'keel.context.reduced',
        {
          'keel.context.messages_before': event.messagesBefore,
          'keel.context.messages_after': event.messagesAfter,
          'keel.run.step': event.step,
        },
        event.atMs,
      );
      return root;
    case 'handoff':
      root.addEvent(
        'keel.handoff',
        { 'keel.handoff.from': event.from, 'keel.handoff.to': event.to, 'keel.run.step': event.step },
        event.atMs,
      );
      return root;
    default:
      return root;
  }
}
