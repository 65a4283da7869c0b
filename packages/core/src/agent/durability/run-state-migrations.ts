import type { SerializedError } from '../../errors/serialize.js';
import { throwOptionError } from '../../options/option-error.js';
import type { Message } from '../../spec/model.js';
import { pendingDecisionOf } from '../run/pending-decision.js';
import {
  idempotencyKeyOf,
  type PendingToolCall,
  RUN_STATE_SCHEMA_VERSION,
  type RunPhase,
  type RunState,
} from '../run/run-state.js';

type StoredState = Record<string, unknown>;

/**
 * Each entry moves a stored state from version `index + 1` to the next. Never edit a released entry; append one with
 * every new schema version.
 */
const MIGRATIONS: readonly ((state: StoredState) => StoredState)[] = [fromVersion1, fromVersion2];

const PHASES: readonly RunPhase[] = ['model', 'answer', 'tools', 'ended'];
const STATUSES: readonly string[] = ['running', 'completed', 'failed', 'interrupted', 'cancelled'];

/**
 * Brings a stored run state to the current schema version ({@link RUN_STATE_SCHEMA_VERSION}), through every
 * migration in turn. A state from a newer keel, or one that is not a run state at all, is `config.invalid` (the
 * message says what to do). The stored value is not modified.
 *
 * @example
 *   const state = migrateRunState((await store.loadRun(runId))!.state, runId);
 */
export function migrateRunState(stored: unknown, runId?: string): RunState {
  const where = runId === undefined ? 'the stored run state' : `the stored state of run ${runId}`;
  if (typeof stored !== 'object' || stored === null || Array.isArray(stored)) {
    throwOptionError({
      where: 'resume',
      option: 'options',
      message: `${where} is not an object: the store does not hold a keel run state`,
    });
  }
  const version = (stored as StoredState).schemaVersion;
  if (!Number.isInteger(version) || (version as number) < 1) {
    throwOptionError({
      where: 'resume',
      option: 'options',
      message: `${where} has no valid schemaVersion: the store does not hold a keel run state`,
    });
  }
  if ((version as number) > RUN_STATE_SCHEMA_VERSION) {
    throwOptionError({
      where: 'resume',
      option: 'options',
      message:
        `${where} has schema version ${version}, newer than this keel understands (${RUN_STATE_SCHEMA_VERSION}): ` +
        'upgrade keel (@keel/core) to resume it',
    });
  }
  let state = structuredClone(stored) as StoredState;
  for (let from = version as number; from < RUN_STATE_SCHEMA_VERSION; from++)
    state = MIGRATIONS[from - 1]!(state);
  checkShape(state, where, runId);
  return state as unknown as RunState;
}

/**
 * Version 1 to 2: calls get `attempts`; the report counts store retries; an answer received but not yet settled
 * moves to the `answer` phase (version 1 would have asked the model again; its finish reason was not kept, so it is
 * taken as `stop`); an interrupted run gets back the pending calls version 1 dropped, rebuilt from the last assistant
 * message, with the call that awaits approval pending and every other call counted as started, so that resume consults
 * the ledger and never runs a call twice on a guess.
 */
function fromVersion1(state: StoredState): StoredState {
  const calls = Array.isArray(state.pendingToolCalls) ? (state.pendingToolCalls as StoredState[]) : [];
  for (const call of calls) call.attempts = call.status === 'pending' ? 0 : 1;
  const report = state.report as { retries?: Record<string, number> } | undefined;
  if (report?.retries !== undefined) report.retries.store ??= 0;
  state.pendingDecisions = [];
  const messages = Array.isArray(state.messages) ? (state.messages as Message[]) : [];
  const last = messages[messages.length - 1];
  if (
    state.status === 'running' &&
    state.phase === 'model' &&
    last?.role === 'assistant' &&
    !hasCalls(last)
  ) {
    state.phase = 'answer';
    state.finishReason = 'stop';
  }
  if (state.status === 'interrupted') restoreInterruptedCalls(state, messages);
  state.schemaVersion = 2;
  return state;
}

/** Version 2 to 3: the report counts degraded tool results (none before). */
function fromVersion2(state: StoredState): StoredState {
  const report = state.report as { degradations?: unknown } | undefined;
  if (typeof report === 'object' && report !== null) report.degradations ??= { total: 0, byTool: {} };
  state.schemaVersion = 3;
  return state;
}

function restoreInterruptedCalls(state: StoredState, messages: Message[]): void {
  const assistant = [...messages].reverse().find((message) => message.role === 'assistant');
  const toolCalls = assistant?.toolCalls ?? [];
  const data = (state.error as SerializedError | undefined)?.data;
  const waiting = typeof data?.callIndex === 'number' ? data.callIndex : -1;
  if (toolCalls.length === 0 || waiting < 0 || waiting >= toolCalls.length) return;
  const runId = String(state.runId);
  const step = Number(state.step);
  const pending: PendingToolCall[] = toolCalls.map((call, callIndex) => ({
    callIndex,
    call,
    idempotencyKey: idempotencyKeyOf(runId, step, callIndex),
    status: callIndex === waiting ? 'pending' : 'started',
    attempts: callIndex === waiting ? 0 : 1,
  }));
  state.pendingToolCalls = pending;
  state.phase = 'tools';
  state.pendingDecisions = [pendingDecisionOf('approval', pending[waiting]!, step)];
}

function hasCalls(message: Message): boolean {
  return message.role === 'assistant' && Array.isArray(message.toolCalls) && message.toolCalls.length > 0;
}

function checkShape(state: StoredState, where: string, runId: string | undefined): void {
  const problems: string[] = [];
  if (typeof state.runId !== 'string') problems.push('runId');
  if (typeof state.agentName !== 'string') problems.push('agentName');
  if (!STATUSES.includes(state.status as string)) problems.push('status');
  if (!PHASES.includes(state.phase as RunPhase)) problems.push('phase');
  if (!Number.isInteger(state.step)) problems.push('step');
  if (!Array.isArray(state.messages)) problems.push('messages');
  if (!Array.isArray(state.pendingToolCalls)) problems.push('pendingToolCalls');
  if (!Array.isArray(state.pendingDecisions)) problems.push('pendingDecisions');
  if (typeof state.report !== 'object' || state.report === null) problems.push('report');
  if (typeof state.usage !== 'object' || state.usage === null) problems.push('usage');
  if (!Number.isFinite(state.startedAtMs) || !Number.isFinite(state.deadlineAtMs))
    problems.push('startedAtMs');
  if (problems.length > 0)
    throwOptionError({
      where: 'resume',
      option: 'options',
      message: `${where} is not a valid keel run state (bad ${problems.join(', ')})`,
    });
  if (runId !== undefined && state.runId !== runId) {
    throwOptionError({
      where: 'resume',
      option: 'options',
      message: `${where} belongs to run ${String(state.runId)}: the store is inconsistent`,
    });
  }
}
