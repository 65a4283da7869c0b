import type {
  KeelError,
  Message,
  PendingDecision,
  RunEvent,
  RunEventListener,
  RunResult,
  SessionRecord,
} from '@keel/core';
import { type Output, paint } from '../../output/output.js';
import { ModelWait } from './model-wait.js';
import type { StreamRedactor } from './stream-redactor.js';

/** What the chat shows at its start. */
export interface ChatStart {
  sessionId: string;
  agentName: string;
  /** The model chain, such as `simulated/sim-primary → simulated/sim-fallback`. */
  models: string;
  /** Set when the agent runs on the offline simulated provider. */
  simulated?: { faults: string; seed: number };
  /** The session as stored, when it exists already. */
  session: SessionRecord | undefined;
  /** The command that comes back to this session. */
  comeBack: string;
}

/** How `keel chat` shows a conversation: text for a person, or JSON lines for a machine. */
export interface ChatView {
  started(start: ChatStart): void;
  /** The run options that show a run live: its events, and its answer as it streams. */
  live(): { onEvent: RunEventListener; onTextDelta: (delta: string) => void };
  ended(result: RunResult<unknown>): void;
  /** Decisions a run waits for, before the chat asks for them. */
  decisionsNeeded(result: RunResult<unknown>): void;
  /** A question about one decision (text only: JSON readers know the pending list). */
  decisionPrompt(decision: PendingDecision): string;
  notice(text: string): void;
  failure(error: KeelError): void;
  left(sessionId: string, comeBack: string): void;
  /** The prompt for the user's next message. */
  readonly prompt: string;
}

/**
 * Shows the chat to a person: the answer streamed as it is written, retries, fallbacks and tool calls inline. While a
 * model call has sent nothing for a second, a line says so and for how long: on a terminal (`terminal`) one line
 * ticking in place every second and erased when the answer comes, elsewhere a line every 5 s. Every character goes
 * through `redactor`, so that no API key is shown, even one a model streams in pieces.
 */
export class TextChatView implements ChatView {
  readonly prompt: string;
  private midLine = false;
  /** Set while deltas of one assistant message are being written. */
  private answering = false;
  /**
   * The answer being streamed (since the last event line, or across a recovered stream): the answer, when the run
   * completes.
   */
  private streamed = '';
  /** Set by a `continued` stream recovery: the next deltas go on with the answer shown so far. */
  private continuing = false;
  /** Whether the terminal's current line is the ticking wait line (to erase before anything else is written). */
  private waitShown = false;
  private readonly wait: ModelWait;

  constructor(
    private readonly output: Output,
    private readonly raw: (text: string) => void,
    private readonly redactor: StreamRedactor,
    private readonly terminal = false,
  ) {
    this.prompt = `${paint(output, 'bold', 'you ›')} `;
    this.wait = new ModelWait((model, waitedMs) => this.waiting(model, waitedMs), {
      everyMs: terminal ? 1_000 : 5_000,
    });
  }

  started(start: ChatStart): void {
    const { output } = this;
    this.line(
      `${paint(output, 'bold', `keel chat ${start.agentName}`)}  session ${start.sessionId}  models ${start.models}`,
    );
    if (start.simulated !== undefined) {
      this.line(
        paint(
          output,
          'grey',
          `offline simulated provider · faults ${start.simulated.faults} · seed ${start.simulated.seed}`,
        ),
      );
    }
    const session = start.session;
    if (session !== undefined && session.turns.length > 0) {
      const count = session.turns.length;
      this.line(
        paint(
          output,
          'grey',
          `resuming session ${session.sessionId}: ${count} turn${count === 1 ? '' : 's'} so far; the last one:`,
        ),
      );
      for (const message of session.turns[count - 1]!.messages as unknown as Message[]) {
        if (message.role === 'user') this.line(`${paint(output, 'grey', 'you ›')} ${message.content}`);
        else if (message.role === 'assistant' && message.content !== '')
          this.line(`${paint(output, 'grey', 'agent ›')} ${message.content}`);
      }
    }
    this.line(paint(output, 'grey', `come back to this conversation with: ${start.comeBack}`));
    this.line(
      paint(output, 'grey', 'Ctrl-C stops an answer; Ctrl-C or Ctrl-D at the prompt (or /exit) leaves.'),
    );
    this.line('');
  }

  live(): { onEvent: RunEventListener; onTextDelta: (delta: string) => void } {
    this.answering = false;
    this.streamed = '';
    return {
      onEvent: (event) => this.event(event),
      onTextDelta: (delta) => {
        this.wait.stop();
        if (!this.answering) {
          this.endLine();
          this.write(`${paint(this.output, 'bold', 'agent ›')} ${this.continuing ? '… ' : ''}`);
          this.answering = true;
          if (!this.continuing) this.streamed = '';
          this.continuing = false;
        }
        this.write(delta);
        this.streamed += delta;
        this.midLine = !delta.endsWith('\n');
      },
    };
  }

  ended(result: RunResult<unknown>): void {
    const { output } = this;
    this.wait.stop();
    this.endLine();
    this.answering = false;
    if (result.status === 'completed') {
      const text = typeof result.output === 'string' ? result.output : JSON.stringify(result.output ?? null);
      if (this.streamed.trim() !== text.trim()) this.line(`${paint(output, 'bold', 'agent ›')} ${text}`);
      if (result.session?.outcome === 'unsaved') {
        this.line(
          paint(
            output,
            'yellow',
            `  ! this answer is not in the session yet (${result.session.error?.code ?? 'store error'}): the next turn saves it`,
          ),
        );
      }
    } else if (result.status === 'failed') {
      this.line(
        `${paint(output, 'red', '  ✗ failed')} ${result.error?.code ?? ''}: ${result.error?.message ?? result.stopReason}`,
      );
      if (result.error?.guidance !== undefined)
        this.line(paint(output, 'grey', `    guidance: ${result.error.guidance}`));
      this.line(paint(output, 'grey', '    nothing of this turn is kept in the session'));
    } else if (result.status === 'cancelled') {
      this.line(
        paint(output, 'yellow', '  ■ cancelled: the session keeps the turns that completed before this one'),
      );
    } else if ((result.pending ?? []).length === 0) {
      this.line(
        paint(
          output,
          'yellow',
          `  ‖ the run paused (${result.stopReason}) and holds the session: keel resume ${result.runId}, or come back to the chat`,
        ),
      );
    }
    this.streamed = '';
    this.line('');
  }

  decisionsNeeded(result: RunResult<unknown>): void {
    this.wait.stop();
    this.endLine();
    this.answering = false;
    const count = result.pending?.length ?? 0;
    this.line(
      paint(
        this.output,
        'yellow',
        `  ‖ the run waits for ${count === 1 ? 'a decision' : `${count} decisions`}`,
      ),
    );
  }

  decisionPrompt(decision: PendingDecision): string {
    const call = `${decision.toolName} ${JSON.stringify(decision.arguments)}`;
    return decision.kind === 'approval'
      ? `  ${paint(this.output, 'yellow', '?')} ${call} needs approval. Approve? [y/n] `
      : `  ${paint(this.output, 'yellow', '?')} ${call} may or may not have run before the run stopped. Run it again (its effect may happen twice)? [y/n] `;
  }

  notice(text: string): void {
    this.endLine();
    this.line(paint(this.output, 'grey', text));
  }

  failure(error: KeelError): void {
    this.wait.stop();
    this.endLine();
    this.line(`${paint(this.output, 'red', error.code)}: ${error.message}`);
    if (error.guidance !== undefined) this.line(paint(this.output, 'grey', `guidance: ${error.guidance}`));
  }

  left(sessionId: string, comeBack: string): void {
    this.endLine();
    this.line(paint(this.output, 'grey', `session ${sessionId} kept; come back with: ${comeBack}`));
  }

  private event(event: RunEvent): void {
    if (event.type === 'model-call-start') this.wait.start(event.model);
    else if (event.type === 'model-call-end' || event.type === 'run-end') this.wait.stop();
    const line = eventLine(event, this.output);
    if (line === undefined) return;
    this.endLine();
    this.answering = false;
    this.line(`  ${line}`);
    // A continued answer goes on after the text shown (never shown twice); a restarted one starts again.
    if (event.type === 'stream-recovered') {
      this.continuing = event.mode === 'continued';
      if (!this.continuing) this.streamed = '';
    }
  }

  /** The model has sent nothing for `waitedMs`: say so (in place on a terminal). */
  private waiting(model: string, waitedMs: number): void {
    const text = paint(this.output, 'grey', `  ⧗ waiting for ${model}: ${Math.round(waitedMs / 1_000)} s`);
    if (!this.terminal) {
      this.endLine();
      this.line(text);
      return;
    }
    if (!this.waitShown) this.endLine();
    this.raw(`\r\u001b[2K${text}`);
    this.waitShown = true;
  }

  /** Erases the wait line, so that what comes next takes its place. */
  private eraseWait(): void {
    if (!this.waitShown) return;
    this.waitShown = false;
    this.raw('\r\u001b[2K');
  }

  private endLine(): void {
    this.eraseWait();
    this.raw(this.redactor.flush());
    if (this.midLine) this.write('\n');
    this.midLine = false;
  }

  private write(text: string): void {
    this.eraseWait();
    this.raw(this.redactor.push(text));
  }

  private line(text: string): void {
    this.write(`${text}\n`);
    this.midLine = false;
  }
}

/** One event as a short line, or undefined for events a chat does not show. */
function eventLine(event: RunEvent, output: Output): string | undefined {
  switch (event.type) {
    case 'tool-call-start':
      return `${paint(output, 'cyan', '⚙')} ${event.toolName} …`;
    case 'tool-call-end':
      return event.status === 'success'
        ? `${paint(output, 'green', '✓')} ${event.toolName} (${event.durationMs} ms)`
        : `${paint(output, 'red', '✗')} ${event.toolName} failed: ${event.errorCode ?? 'error'} (the model is told)`;
    case 'retry-scheduled':
      return `${paint(output, 'yellow', '↻')} retrying ${event.target} ${event.name} after ${event.errorCode} in ${Math.round(event.delayMs)} ms`;
    case 'fallback-used':
      return `${paint(output, 'magenta', '⇢')} falling back from ${event.from} to ${event.to} after ${event.errorCode}`;
    case 'breaker-opened':
    case 'breaker-half-opened':
    case 'breaker-closed':
      return `${paint(output, 'magenta', '◆')} ${event.type.replace('-', ' ')}: ${event.target} ${event.name}`;
    case 'tool-degraded':
      return `${paint(output, 'yellow', '⇢')} ${event.toolName} answered by ${event.fallback} after ${event.errorCode}`;
    case 'correction':
      return `${paint(output, 'cyan', '✎')} correction (${event.kind}): ${event.message}`;
    case 'guardrail-tripped':
      return `${paint(output, 'red', '⛨')} guardrail ${event.guardrail} (${event.stage}) ${event.action}`;
    case 'stream-recovered':
      return event.mode === 'continued'
        ? `${paint(output, 'yellow', '↺')} stream recovered on ${event.model} after ${event.errorCode}: the answer goes on after the ${event.keptCharacters} characters shown`
        : `${paint(output, 'yellow', '↺')} stream recovered on ${event.model} after ${event.errorCode}: the answer starts again (the text above is void)`;
    case 'context-reduced':
      return `${paint(output, 'cyan', '⇣')} context reduced from ${event.messagesBefore} to ${event.messagesAfter} messages`;
    default:
      return undefined;
  }
}
