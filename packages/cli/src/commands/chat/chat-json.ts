import type { KeelError, PendingDecision, RunEvent, RunEventListener, RunResult } from '@keel/core';
import { resultJson } from '../../output/render.js';
import type { ChatStart, ChatView } from './chat-view.js';
import { ModelWait } from './model-wait.js';
import type { StreamRedactor } from './stream-redactor.js';

/**
 * Shows the chat to a machine: one JSON object per line. Run events are written as they are (`type` is the event's,
 * such as `tool-call-end` or `text-delta`); the chat's own lines have types `chat-session` (at the start),
 * `chat-answer` (a run's result, without its messages), `chat-decisions` (what a run waits for: answer each with a
 * line `y` or `n [reason]`, in order), `chat-waiting` (`model` and `waitedMs`: a model call has sent nothing for a
 * second, then every 5 s until it does), `chat-notice`, `chat-error` and `chat-end`. No API key is written: every line
 * goes through `redactor`, and `text-delta` events hold back the end of a delta that may begin one.
 */
export class JsonChatView implements ChatView {
  readonly prompt = '';
  /** The last `text-delta` event, whose held-back end is written before the next other line. */
  private lastDelta: Extract<RunEvent, { type: 'text-delta' }> | undefined;

  private readonly wait = new ModelWait(
    (model, waitedMs) => this.emit({ type: 'chat-waiting', model, waitedMs }),
    { everyMs: 5_000 },
  );

  constructor(
    private readonly write: (text: string) => void,
    private readonly redactor: StreamRedactor,
  ) {}

  started(start: ChatStart): void {
    this.emit({
      type: 'chat-session',
      sessionId: start.sessionId,
      agentName: start.agentName,
      models: start.models,
      ...(start.simulated === undefined ? {} : { simulated: start.simulated }),
      turns: start.session?.turns.length ?? 0,
      version: start.session?.version ?? 0,
      comeBack: start.comeBack,
    });
  }

  live(): { onEvent: RunEventListener; onTextDelta: (delta: string) => void } {
    return {
      onEvent: (event) => {
        if (event.type === 'model-call-start') this.wait.start(event.model);
        else if (event.type === 'model-call-end' || event.type === 'run-end' || event.type === 'text-delta')
          this.wait.stop();
        if (event.type !== 'text-delta') {
          this.emit(event);
          return;
        }
        this.lastDelta = event;
        const delta = this.redactor.push(event.delta);
        if (delta !== '') this.line({ ...event, delta });
      },
      onTextDelta: () => undefined,
    };
  }

  ended(result: RunResult<unknown>): void {
    this.wait.stop();
    const { messages: _messages, ...summary } = resultJson(result);
    this.emit({ type: 'chat-answer', ...summary, session: sessionJson(result) });
  }

  decisionsNeeded(result: RunResult<unknown>): void {
    this.wait.stop();
    this.emit({ type: 'chat-decisions', runId: result.runId, pending: result.pending ?? [] });
  }

  decisionPrompt(_decision: PendingDecision): string {
    return '';
  }

  notice(text: string): void {
    this.emit({ type: 'chat-notice', message: text });
  }

  failure(error: KeelError): void {
    this.wait.stop();
    this.emit({ type: 'chat-error', error: error.toJSON() });
  }

  left(sessionId: string, comeBack: string): void {
    this.emit({ type: 'chat-end', sessionId, comeBack });
  }

  private emit(value: object): void {
    const rest = this.redactor.flush();
    if (rest !== '' && this.lastDelta !== undefined) this.line({ ...this.lastDelta, delta: rest });
    this.lastDelta = undefined;
    this.line(value);
  }

  private line(value: object): void {
    this.write(`${this.redactor.redact(JSON.stringify(value))}\n`);
  }
}

function sessionJson(result: RunResult<unknown>): Record<string, unknown> | null {
  const session = result.session;
  if (session === undefined) return null;
  return {
    sessionId: session.sessionId,
    outcome: session.outcome,
    ...(session.version === undefined ? {} : { version: session.version }),
    ...(session.error === undefined ? {} : { error: session.error.toJSON() }),
  };
}
