import { type JsonValue, KeelError } from '../errors/keel-error.js';
import { isPacePriority } from '../governance/pace-options.js';
import { throwOptionError } from '../options/option-error.js';
import type { Message } from '../spec/model.js';
import type { NewRun } from '../spec/run-store.js';
import { RUN_STATE_SCHEMA_VERSION } from './run/run-state.js';
import { initialMessages } from './start-run.js';

/**
 * What the record of a queued run holds until a worker starts it (`RunStore` status `queued`): the run's input and
 * when it was submitted. The worker's agent builds the run's state from it (its instructions first), so the time a
 * run waits in the queue does not count against its run timeout.
 */
export interface QueuedRunState {
  readonly queued: true;
  readonly input: string | Message[];
  readonly submittedAtMs: number;
  /** The tenant the run spends for (see the run option `tenant`); absent for none. */
  readonly tenant?: string;
  /** The run's pace priority (see the run option `priority`); absent for 0. */
  readonly priority?: number;
}

/** What {@link queuedRun} needs. */
export interface QueuedRunOptions {
  /** The run's id: a non-empty string of at most 200 characters. */
  runId: string;
  /** The agent that is to run it: a worker resumes it with the agent of that name. */
  agentName: string;
  /** The prompt, or the conversation so far, as `agent.run` takes it. */
  input: string | readonly Message[];
  /** Now (ms since the epoch): the record's `createdAtMs`. */
  nowMs: number;
  /** The tenant the run spends for (see the run option `tenant`). Defaults to none. */
  tenant?: string;
  /** The run's pace priority, an integer from -10 to 10 (see the run option `priority`). Defaults to 0. */
  priority?: number;
}

/**
 * A queued run's record, for `RunStore.createRun`: stored with status `queued`, it is listed at once and started
 * later by `agent.resume(runId)` in whichever process takes it. Throws `config.invalid` for a bad id, agent name or
 * input.
 *
 * @example
 *   await store.createRun(queuedRun({ runId, agentName: 'support', input: 'Refund order 42', nowMs: Date.now() }));
 *   // later, in a worker:
 *   const result = await support.resume(runId);
 */
export function queuedRun(options: QueuedRunOptions): NewRun {
  const { runId, agentName, input, nowMs, tenant, priority } = options;
  if (priority !== undefined && !isPacePriority(priority)) {
    throwOptionError({
      where: 'queuedRun',
      option: 'priority',
      message: `priority must be an integer from -10 to 10; got ${JSON.stringify(priority)}`,
    });
  }
  if (tenant !== undefined && (typeof tenant !== 'string' || !/^[A-Za-z0-9._:@-]{1,64}$/.test(tenant))) {
    throwOptionError({
      where: 'queuedRun',
      option: 'tenant',
      message: `tenant must be 1 to 64 letters, digits or . _ : @ -; got ${JSON.stringify(tenant)}`,
    });
  }
  if (typeof runId !== 'string' || runId.trim() === '' || runId.length > 200) {
    throwOptionError({
      where: 'queuedRun',
      option: 'runId',
      message: 'runId must be a non-empty string of at most 200 characters',
    });
  }
  if (typeof agentName !== 'string' || agentName.trim() === '')
    throwOptionError({
      where: 'queuedRun',
      option: 'agentName',
      message: 'agentName must be a non-empty string',
    });
  if (!Number.isFinite(nowMs))
    throwOptionError({
      where: 'queuedRun',
      option: 'nowMs',
      message: 'nowMs must be a time in ms since the epoch',
    });
  try {
    initialMessages({ instructions: undefined }, input);
  } catch (error) {
    if (KeelError.isInstance(error))
      throwOptionError({
        where: 'queuedRun',
        option: 'options',
        message: error.message.replace(/^run: /, ''),
      });
    throw error;
  }
  if (typeof input === 'string' && input.trim() === '')
    throwOptionError({
      where: 'queuedRun',
      option: 'input',
      message: 'input is empty: say what the agent should do',
    });
  const state: QueuedRunState = {
    queued: true,
    input: typeof input === 'string' ? input : input.map((message) => ({ ...message })),
    submittedAtMs: nowMs,
    ...(tenant === undefined ? {} : { tenant }),
    ...(priority === undefined || priority === 0 ? {} : { priority }),
  };
  return {
    runId,
    agentName,
    status: 'queued',
    schemaVersion: RUN_STATE_SCHEMA_VERSION,
    state: state as unknown as JsonValue,
    createdAtMs: nowMs,
  };
}

/** The queued state a record holds, or undefined when it holds a run's state (the run has started). */
export function readQueuedState(state: JsonValue): QueuedRunState | undefined {
  if (typeof state !== 'object' || state === null || Array.isArray(state)) return undefined;
  return state.queued === true ? (state as unknown as QueuedRunState) : undefined;
}
