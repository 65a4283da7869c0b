import { type RunEvent, redactSecrets } from '@keel/core';

/** pino's levels that keel's lines use. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** One log line of a run event: its level, message and fields (besides `runId`, `step` and trace ids). */
export interface EventLine {
  readonly level: LogLevel;
  readonly message: string;
  readonly fields: Record<string, unknown>;
}

/**
 * The log line of a run event, or undefined for events not logged (`text-delta`: answer text is content). Messages
 * and text fields are redacted (`redactSecrets`); correction messages (what the model is told, which may quote its
 * arguments) only when `recordContent`.
 */
export function eventLine(event: RunEvent, recordContent: boolean): EventLine | undefined {
  switch (event.type) {
    case 'run-start':
      return line('info', `run started (agent ${event.agentName})`, { agent: event.agentName });
    case 'run-resumed':
      return line('info', `run resumed at step ${event.step} (agent ${event.agentName})`, {
        agent: event.agentName,
      });
    case 'run-end': {
      const level: LogLevel =
        event.status === 'completed' ? 'info' : event.status === 'failed' ? 'error' : 'warn';
      const error =
        event.error === undefined
          ? undefined
          : { code: event.error.code, message: redactSecrets(event.error.message) };
      return line(level, `run ${event.status} (${event.stopReason}) in ${event.durationMs} ms`, {
        status: event.status,
        stopReason: event.stopReason,
        durationMs: event.durationMs,
        ...(error === undefined ? {} : { error }),
      });
    }
    case 'model-call-start':
      return line('debug', `model ${event.model} called (attempt ${event.attempt})`, {
        model: event.model,
        attempt: event.attempt,
      });
    case 'model-call-end':
      return event.outcome === 'success'
        ? line('info', `model ${event.model} answered (${event.finishReason}, ${event.durationMs} ms)`, {
            model: event.model,
            attempt: event.attempt,
            outcome: event.outcome,
            durationMs: event.durationMs,
            finishReason: event.finishReason,
            usage: event.usage,
            ...(event.responseModel === undefined ? {} : { responseModel: event.responseModel }),
            ...(event.requestId === undefined ? {} : { requestId: event.requestId }),
          })
        : line('warn', `model ${event.model} failed: ${event.errorCode}`, {
            model: event.model,
            attempt: event.attempt,
            outcome: event.outcome,
            durationMs: event.durationMs,
            errorCode: event.errorCode,
          });
    case 'retry-scheduled':
      return line(
        'warn',
        `retry ${event.target} ${event.name} in ${Math.round(event.delayMs)} ms after ${event.errorCode} (attempt ${event.attempt} failed)`,
        {
          target: event.target,
          name: event.name,
          attempt: event.attempt,
          delayMs: event.delayMs,
          errorCode: event.errorCode,
        },
      );
    case 'fallback-used':
      return line('warn', `fallback ${event.from} → ${event.to} after ${event.errorCode}`, {
        from: event.from,
        to: event.to,
        errorCode: event.errorCode,
      });
    case 'breaker-opened':
    case 'breaker-half-opened':
    case 'breaker-closed':
      return line(
        event.type === 'breaker-opened' ? 'warn' : 'info',
        `${event.type.replace('-', ' ')}: ${event.target} ${event.name}`,
        { target: event.target, name: event.name },
      );
    case 'tool-call-start':
      return line('debug', `tool ${event.toolName} started`, {
        toolName: event.toolName,
        callIndex: event.callIndex,
        idempotencyKey: event.idempotencyKey,
        toolCallId: event.toolCallId,
      });
    case 'tool-call-progress':
      return line(
        'debug',
        `tool ${event.toolName} progress ${event.progress}${event.total === undefined ? '' : ` of ${event.total}`}`,
        {
          toolName: event.toolName,
          callIndex: event.callIndex,
          progress: event.progress,
          ...(event.total === undefined ? {} : { total: event.total }),
          ...(recordContent && event.message !== undefined
            ? { progressMessage: redactSecrets(event.message) }
            : {}),
        },
      );
    case 'tool-call-end':
      return event.status === 'success'
        ? line('info', `tool ${event.toolName} succeeded (${event.durationMs} ms)`, {
            toolName: event.toolName,
            callIndex: event.callIndex,
            idempotencyKey: event.idempotencyKey,
            status: event.status,
            durationMs: event.durationMs,
          })
        : line('warn', `tool ${event.toolName} failed: ${event.errorCode} (sent to the model as data)`, {
            toolName: event.toolName,
            callIndex: event.callIndex,
            idempotencyKey: event.idempotencyKey,
            status: event.status,
            durationMs: event.durationMs,
            errorCode: event.errorCode,
          });
    case 'correction':
      return line('info', `correction asked of the model (${event.kind})`, {
        kind: event.kind,
        ...(event.toolName === undefined ? {} : { toolName: event.toolName }),
        ...(recordContent ? { correction: redactSecrets(event.message) } : {}),
      });
    case 'guardrail-tripped':
      return line('warn', `guardrail ${event.guardrail} (${event.stage}) ${event.action}: ${event.trigger}`, {
        guardrail: event.guardrail,
        stage: event.stage,
        action: event.action,
        trigger: event.trigger,
      });
    case 'handoff':
      return line('info', `handoff ${event.from} → ${event.to}`, { from: event.from, to: event.to });
    case 'context-reduced':
      return line('info', `context reduced from ${event.messagesBefore} to ${event.messagesAfter} messages`, {
        messagesBefore: event.messagesBefore,
        messagesAfter: event.messagesAfter,
      });
    case 'checkpoint-saved':
      return line('debug', `checkpoint ${event.transition} saved (${event.durationMs} ms)`, {
        transition: event.transition,
        durationMs: event.durationMs,
      });
    case 'checkpoint-failed':
      return line('error', `checkpoint ${event.transition} failed: ${event.errorCode} (the run halts)`, {
        transition: event.transition,
        durationMs: event.durationMs,
        errorCode: event.errorCode,
      });
    case 'pace-store-unavailable':
      return line(
        'warn',
        `pace store unavailable (${event.errorCode}): ${event.model} paced by this process alone`,
        {
          model: event.model,
          errorCode: event.errorCode,
        },
      );
    case 'step-end':
      return line('debug', `step ${event.step} ended (${event.toolCalls} tool calls)`, {
        toolCalls: event.toolCalls,
      });
    default:
      return undefined;
  }
}

function line(level: LogLevel, message: string, fields: Record<string, unknown>): EventLine {
  return { level, message: redactSecrets(message), fields };
}
