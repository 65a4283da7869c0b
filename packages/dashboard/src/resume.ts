import type {
  ApprovalAnswer,
  PendingDecision,
  StopReason,
  TerminalStatus,
  ToolCallDecision,
} from '@keel/core';
import { optionError } from '@keel/core/adapter';

/** A human's answers to the decisions a run waits for, keyed by idempotency key (as `agent.resume` takes them). */
export interface RunAnswers {
  approvals: Record<string, ApprovalAnswer>;
  decisions: Record<string, ToolCallDecision>;
}

/** What the dashboard asks its {@link ResumeRun} to do. */
export interface ResumeRequest extends RunAnswers {
  runId: string;
  /** The stored run's agent name: which agent to build. */
  agentName: string;
}

/** How a resumed run ended (this time: it may be interrupted again). */
export interface ResumeOutcome {
  status: TerminalStatus;
  stopReason: StopReason;
}

/**
 * Resumes a run with a human's answers, the way `keel resume` does. Resolves once the resume is under way, with
 * `finished` settling when the run stops again; rejects (with a KeelError saying what to fix) when it cannot start,
 * such as when no agent file is known for the run.
 */
export type ResumeRun = (request: ResumeRequest) => Promise<{ finished: Promise<ResumeOutcome> }>;

/** One answer as the page sends it. */
interface AnswerInput {
  idempotencyKey: string;
  answer: 'approve' | 'reject' | 'execute' | 'abandon';
  reason?: string;
}

const ANSWERS: readonly AnswerInput['answer'][] = ['approve', 'reject', 'execute', 'abandon'];
/** The longest rejection reason kept: it is shown to the model. */
export const MAX_REASON_CHARS = 2_000;

/**
 * Reads `{ answers: [{ idempotencyKey, answer, reason? }] }` from a request body and checks each answer against the
 * run's pending decisions: approvals take `approve`/`reject` (with an optional reason), calls that may have run take
 * `execute`/`abandon`. Throws `config.invalid` naming what is wrong.
 */
export function parseAnswers(body: unknown, pending: readonly PendingDecision[]): RunAnswers {
  const list = isObject(body) ? body.answers : undefined;
  if (!Array.isArray(list) || list.length === 0) {
    throw optionError({
      where: 'resume',
      option: 'The',
      message:
        'The body must be { "answers": [{ "idempotencyKey", "answer", "reason"? }] } with one answer at least',
      prefixWhere: false,
    });
  }
  const result: RunAnswers = { approvals: {}, decisions: {} };
  for (const item of list) {
    if (!isObject(item) || typeof item.idempotencyKey !== 'string' || typeof item.answer !== 'string') {
      throw optionError({
        where: 'resume',
        option: 'Each',
        message: 'Each answer needs an idempotencyKey and an answer (approve, reject, execute or abandon)',
        prefixWhere: false,
      });
    }
    const { idempotencyKey: key, answer, reason } = item;
    if (!ANSWERS.includes(answer as AnswerInput['answer'])) {
      throw optionError({
        where: 'resume',
        option: 'Unknown',
        message: `Unknown answer ${JSON.stringify(answer)}: use approve, reject, execute or abandon`,
        prefixWhere: false,
      });
    }
    const decision = pending.find((candidate) => candidate.idempotencyKey === key);
    if (decision === undefined) {
      throw optionError({
        where: 'resume',
        option: 'The',
        message: `The run does not wait for a decision about call ${key}`,
        prefixWhere: false,
      });
    }
    if (key in result.approvals || key in result.decisions)
      throw optionError({
        where: 'resume',
        option: 'Call',
        message: `Call ${key} is answered twice`,
        prefixWhere: false,
      });
    if (reason !== undefined && (answer !== 'reject' || typeof reason !== 'string')) {
      throw optionError({
        where: 'resume',
        option: 'Only',
        message: 'Only a rejection takes a reason, and it must be text',
        prefixWhere: false,
      });
    }
    if (typeof reason === 'string' && reason.length > MAX_REASON_CHARS) {
      throw optionError({
        where: 'resume',
        option: 'The',
        message: `The reason is longer than ${MAX_REASON_CHARS} characters`,
        prefixWhere: false,
      });
    }
    if (decision.kind === 'approval') {
      if (answer === 'approve') result.approvals[key] = { approved: true };
      else if (answer === 'reject')
        result.approvals[key] =
          typeof reason === 'string' && reason.trim() !== ''
            ? { approved: false, reason: reason.trim() }
            : { approved: false };
      else
        throw optionError({
          where: 'resume',
          option: 'Call',
          message: `Call ${key} waits for approval: answer approve or reject, not ${answer}`,
          prefixWhere: false,
        });
    } else if (answer === 'execute' || answer === 'abandon') {
      result.decisions[key] = answer;
    } else {
      throw optionError({
        where: 'resume',
        option: 'Call',
        message: `Call ${key} may or may not have run: answer execute or abandon, not ${answer}`,
        prefixWhere: false,
      });
    }
  }
  return result;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
