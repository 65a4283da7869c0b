import { KeelError } from '../../errors/keel-error.js';
import type { Clock, TimerHandle } from '../../policies/clock.js';
import type { AbortFollowable } from '../../policies/context.js';
import type { DeadlineEntry, DeadlineQueue } from '../../policies/deadline-queue.js';

/**
 * Why a run's signal aborted: the caller cancelled it, its run timeout elapsed, or its run store failed or another
 * process took the run over (`halted`: the run pauses, to be resumed).
 */
export type AbortCause = 'cancelled' | 'timeout' | 'halted';

/**
 * One run's abort switch. Its abort reaches every model call and every tool the run makes; it aborts when the
 * caller's signal aborts, when `cancel` is called (through the registry or the agent), or at the run's deadline.
 *
 * It is the policy context of the run's calls, and tells its abort to the policies' listeners itself
 * (`AbortFollowable`): its AbortSignal, which costs microseconds to make, is made only when something reads `signal`
 * (a guardrail, a conversation manager, a tool or provider reading its own signal), aborted already if the run has.
 */
export class RunAbort implements AbortFollowable {
  /** Set once the run aborted. */
  cause: AbortCause | undefined;
  /** Run calls are first attempts as far as the policies above them know. */
  readonly attempt = 1;
  private made: AbortController | undefined;
  private isAborted = false;
  private reason: unknown;
  private listeners: Set<() => void> | undefined;
  private timer: TimerHandle | undefined;
  private queuedDeadline: RunDeadline | undefined;
  private callerSignal: AbortSignal | undefined;

  constructor(
    readonly runId: string,
    private readonly clock: Clock,
  ) {}

  /** The run's AbortController, made on first use (aborted already if the run has). */
  get controller(): AbortController {
    if (this.made === undefined) {
      this.made = new AbortController();
      if (this.isAborted) this.made.abort(this.reason);
    }
    return this.made;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.isAborted;
  }

  /** Calls `listener` once, when the run aborts (not if it has already). */
  addAbortListener(listener: () => void): void {
    this.listeners ??= new Set();
    this.listeners.add(listener);
  }

  removeAbortListener(listener: () => void): void {
    this.listeners?.delete(listener);
  }

  /** Follows the caller's signal: its abort cancels the run, with its reason as the cancellation's cause. */
  follow(signal: AbortSignal | undefined): void {
    if (signal === undefined) return;
    if (signal.aborted) {
      this.cancel(signal.reason);
      return;
    }
    this.callerSignal = signal;
    addFollower(signal, this);
  }

  /**
   * Times the run out at `deadlineAtMs` (ms since the epoch) with `run.timeout`: on a timer of its own, or, given a
   * `queue` (one per agent), on the queue's one timer shared by every run in it.
   */
  deadline(deadlineAtMs: number, timeoutMs: number, queue?: DeadlineQueue): void {
    const leftMs = deadlineAtMs - this.clock.now();
    if (leftMs <= 0) {
      this.timeOut(timeoutMs);
      return;
    }
    if (queue !== undefined) {
      this.queuedDeadline = new RunDeadline(queue, () => this.timeOut(timeoutMs));
      queue.add(this.queuedDeadline, deadlineAtMs);
      return;
    }
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.timeOut(timeoutMs);
    }, leftMs);
  }

  /** Cancels the run. `reason` (when given) becomes the `run.cancelled` error's cause. Returns false once ended. */
  cancel(reason?: unknown): boolean {
    if (this.aborted) return false;
    this.cause = 'cancelled';
    const message =
      typeof reason === 'string' && reason !== ''
        ? `Run ${this.runId} was cancelled: ${reason}`
        : `Run ${this.runId} was cancelled`;
    this.abortWith(
      new KeelError('run.cancelled', message, {
        data: { runId: this.runId },
        ...(reason === undefined ? {} : { cause: reason }),
      }),
    );
    return true;
  }

  /**
   * Stops the run because it can no longer be saved (its store failed, or another process took its lease): running
   * calls are told through their signal, and no further call starts. `error` becomes the signal's reason.
   */
  halt(error: KeelError): boolean {
    if (this.aborted) return false;
    this.cause = 'halted';
    this.abortWith(error);
    return true;
  }

  /** Releases the timer (or the queued deadline) and the caller-signal listener. */
  dispose(): void {
    this.queuedDeadline?.release();
    this.queuedDeadline = undefined;
    if (this.timer !== undefined) {
      this.clock.clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.callerSignal !== undefined) removeFollower(this.callerSignal, this);
    this.callerSignal = undefined;
  }

  /** Aborts the run with `reason`: its signal (if made), then its listeners, in the order they came. */
  private abortWith(reason: unknown): void {
    this.isAborted = true;
    this.reason = reason;
    this.made?.abort(reason);
    const listeners = this.listeners;
    if (listeners === undefined) return;
    this.listeners = undefined;
    for (const listener of listeners) listener();
  }

  private timeOut(timeoutMs: number): void {
    if (this.aborted) return;
    this.cause = 'timeout';
    this.abortWith(
      new KeelError('run.timeout', `Run ${this.runId} did not finish within ${timeoutMs} ms`, {
        data: { runId: this.runId, timeoutMs },
        guidance: 'Raise limits.timeoutMs, or give the agent a smaller task.',
      }),
    );
  }
}

/** A run's deadline in a deadline queue. */
class RunDeadline implements DeadlineEntry {
  dueAtMs = 0;
  previous: DeadlineEntry | undefined;
  next: DeadlineEntry | undefined;
  queued = false;

  constructor(
    private readonly queue: DeadlineQueue,
    readonly expire: () => void,
  ) {}

  release(): void {
    if (this.queued) this.queue.remove(this);
  }
}

// Many runs often share one caller signal (a server's shutdown signal, say). EventTarget checks each new listener
// against every existing one, so one listener per run would make starting N runs O(N²): one listener per signal
// serves all its runs instead.
const followers = new WeakMap<AbortSignal, Set<RunAbort>>();

function addFollower(signal: AbortSignal, run: RunAbort): void {
  let runs = followers.get(signal);
  if (runs === undefined) {
    const created = new Set<RunAbort>();
    runs = created;
    followers.set(signal, created);
    signal.addEventListener(
      'abort',
      () => {
        followers.delete(signal);
        for (const follower of created) follower.cancel(signal.reason);
      },
      { once: true },
    );
  }
  runs.add(run);
}

function removeFollower(signal: AbortSignal, run: RunAbort): void {
  followers.get(signal)?.delete(run);
}

/**
 * The runs in progress in this process, by run id, so that any part of an application can cancel a run it did not
 * start (an HTTP handler, a CLI signal handler). Runs register at their start and leave at their end.
 *
 * @example
 *   const result = assistant.run('Plan my week', { runId: 'run-42' });
 *   runRegistry.cancel('run-42', 'user pressed stop');   // the run ends as `cancelled` with `run.cancelled`
 */
export class RunRegistry {
  private readonly runs = agentRunMap();

  /** Adds a run; a run id already in progress is refused with `config.invalid`. */
  register(run: RunAbort): void {
    if (this.runs.has(run.runId)) {
      throw new KeelError(
        'config.invalid',
        `run: a run with id "${run.runId}" is already in progress; pass a unique runId`,
        {
          data: { runId: run.runId },
        },
      );
    }
    this.runs.set(run.runId, run);
  }

  /** Removes a run (only the registered one: a later run that reused the id is left alone). */
  unregister(run: RunAbort): void {
    if (this.runs.get(run.runId) === run) this.runs.delete(run.runId);
  }

  /**
   * Cancels the run with this id: its model call and tools are told at once through their signal, and the run ends
   * as `cancelled` with `run.cancelled` (`reason`, when given, as the cause). Returns false when no such run is in
   * progress.
   */
  cancel(runId: string, reason?: string): boolean {
    const run = this.runs.get(runId);
    return run === undefined ? false : run.cancel(reason);
  }

  /** Whether a run with this id is in progress. */
  isRunning(runId: string): boolean {
    return runId !== HELD_OPEN_KEY && this.runs.has(runId);
  }

  /** The ids of the runs in progress. */
  runIds(): string[] {
    const ids: string[] = [];
    for (const runId of this.runs.keys()) if (runId !== HELD_OPEN_KEY) ids.push(runId);
    return ids;
  }
}

/**
 * The key of the entry that keeps a map of runs from ever emptying: no run has it (run ids are non-empty). V8 shrinks
 * a Map's table when it loses its last entry, reallocating it (a runtime call): a map that holds one run at a time
 * would pay that for every run, sequential runs being the common case.
 */
const HELD_OPEN_KEY = '';

/** The value under {@link HELD_OPEN_KEY}: a run that has ended, so that cancelling it does nothing. */
let heldOpenValue: RunAbort | undefined;

/**
 * A map of runs by id that never empties (see {@link HELD_OPEN_KEY}): `get` and `has` of a run id behave as on an
 * empty map, but its size and keys include the held-open entry.
 */
export function agentRunMap(): Map<string, RunAbort> {
  if (heldOpenValue === undefined) {
    heldOpenValue = new RunAbort(HELD_OPEN_KEY, {
      now: () => 0,
      setTimeout: () => undefined,
      clearTimeout() {},
    });
    heldOpenValue.cancel();
  }
  return new Map([[HELD_OPEN_KEY, heldOpenValue]]);
}

/** The process-wide registry every agent's runs join. */
export const runRegistry: RunRegistry = new RunRegistry();
