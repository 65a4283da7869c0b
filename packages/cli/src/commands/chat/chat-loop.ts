import {
  type Agent,
  type ApprovalAnswer,
  KeelError,
  newRunId,
  type PendingDecision,
  type RunEventListener,
  type RunResult,
  type RunStore,
  type ToolCallDecision,
} from '@keel/core';
import type { ChatInput } from './chat-input.js';
import type { ChatView } from './chat-view.js';

/** What one turn of the chat passes to the run (or resume) it starts. */
interface LiveOptions {
  signal: AbortSignal;
  onEvent: RunEventListener;
  onTextDelta: (delta: string) => void;
}

/** Answers to the decisions a run waits for, as `resume` takes them. */
interface Answers {
  approvals: Record<string, ApprovalAnswer>;
  decisions: Record<string, ToolCallDecision>;
}

/** What a chat needs besides its input and view. */
export interface ChatLoopOptions {
  agent: Agent<string>;
  store: RunStore;
  sessionId: string;
  /** Called with each new run's id before it starts (to record how it was started, for `keel resume`). */
  beforeRun: (runId: string) => Promise<void>;
  /** Aborts when the process is asked to stop (SIGINT outside a terminal's raw mode): the chat leaves. */
  signal: AbortSignal;
}

/**
 * The conversation: reads a message, runs the agent on the session with it (the answer streamed, events inline),
 * asks for the decisions a run waits for and resumes it with them, until the user leaves. Ctrl-C during a run
 * cancels that run (the session keeps what completed) and the chat goes on; at a prompt it leaves.
 */
export class ChatLoop {
  private leaving = false;

  constructor(
    private readonly options: ChatLoopOptions,
    private readonly input: ChatInput,
    private readonly view: ChatView,
  ) {}

  /** Runs the chat until the user leaves; a run the session was left holding by an earlier chat goes on first. */
  async run(activeRunId: string | undefined): Promise<void> {
    const { signal } = this.options;
    const leave = () => {
      this.leaving = true;
      this.input.close();
    };
    signal.addEventListener('abort', leave, { once: true });
    try {
      if (activeRunId !== undefined) await this.continueRun(activeRunId);
      while (!this.leaving && !signal.aborted) {
        const line = await this.input.question(this.view.prompt);
        if (line === undefined) break;
        const text = line.trim();
        if (text === '') continue;
        if (text === '/exit' || text === '/quit') break;
        const runId = newRunId();
        await this.options.beforeRun(runId);
        await this.turn((live) =>
          this.options.agent.run(text, {
            ...live,
            runId,
            sessionId: this.options.sessionId,
            sessionBusy: 'fail',
          }),
        );
      }
    } finally {
      signal.removeEventListener('abort', leave);
      this.input.close();
    }
  }

  /** Goes on with the run holding the session: it waits for decisions, stopped without ending, or was not appended. */
  private async continueRun(runId: string): Promise<void> {
    const record = await this.options.store.loadRun(runId);
    if (record === undefined || record.status === 'failed' || record.status === 'cancelled') return;
    const why =
      record.status === 'interrupted'
        ? 'waits for decisions'
        : record.status === 'running'
          ? 'stopped without ending'
          : 'completed, its answer not yet saved';
    this.view.notice(`the session's last run ${runId} ${why}: going on with it`);
    await this.turn((live) => this.options.agent.resume(runId, live));
  }

  /** One run, and its resumes while it waits for decisions the user answers. */
  private async turn(start: (live: LiveOptions) => Promise<RunResult<string>>): Promise<void> {
    const controller = new AbortController();
    const cancel = () => controller.abort(new KeelError('run.cancelled', 'Cancelled with Ctrl-C'));
    const { signal } = this.options;
    signal.addEventListener('abort', cancel, { once: true });
    let stopListening = this.input.whileRunning(cancel);
    try {
      let result = await start({ signal: controller.signal, ...this.view.live() });
      while (result.status === 'interrupted' && (result.pending?.length ?? 0) > 0) {
        stopListening();
        stopListening = () => undefined;
        this.view.decisionsNeeded(result);
        const answers = await this.ask(result.pending!);
        if (answers === undefined) {
          this.view.notice(
            `run ${result.runId} waits and holds the session: answer it when you come back, or with keel resume ${result.runId}`,
          );
          this.leaving = true;
          return;
        }
        stopListening = this.input.whileRunning(cancel);
        result = await this.options.agent.resume(result.runId, {
          ...answers,
          signal: controller.signal,
          ...this.view.live(),
        });
      }
      this.view.ended(result);
    } catch (error) {
      this.view.failure(
        KeelError.isInstance(error)
          ? error
          : new KeelError('internal.unexpected', String((error as Error)?.message ?? error), {
              cause: error,
            }),
      );
    } finally {
      stopListening();
      signal.removeEventListener('abort', cancel);
    }
  }

  /** Asks about each decision in turn; undefined when the user leaves instead. */
  private async ask(pending: readonly PendingDecision[]): Promise<Answers | undefined> {
    const answers: Answers = { approvals: {}, decisions: {} };
    for (const decision of pending) {
      for (;;) {
        const line = await this.input.question(this.view.decisionPrompt(decision));
        if (line === undefined) return undefined;
        const match = /^\s*(y|yes|n|no)\b\s*(.*)$/i.exec(line);
        if (match === null) {
          this.view.notice('  answer y (yes) or n (no), optionally followed by a reason');
          continue;
        }
        const yes = match[1]!.toLowerCase().startsWith('y');
        const key = decision.idempotencyKey;
        if (decision.kind === 'uncertain') {
          answers.decisions[key] = yes ? 'execute' : 'abandon';
          break;
        }
        if (yes) {
          answers.approvals[key] = { approved: true };
          break;
        }
        let reason = match[2]!.trim();
        if (reason === '' && this.view.prompt !== '') {
          const given = await this.input.question('    reason (optional, told to the model): ');
          if (given === undefined) return undefined;
          reason = given.trim();
        }
        answers.approvals[key] = reason === '' ? { approved: false } : { approved: false, reason };
        break;
      }
    }
    return answers;
  }
}
