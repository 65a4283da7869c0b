import { DEFAULT_TENANT } from '../governance/budget-gate.js';
import type { CircuitBreaker } from '../policies/circuit-breaker.js';
import type { Event } from '../policies/policy.js';
import type { Message } from '../spec/model.js';
import type { RunEvent } from '../spec/run-events.js';
import type { RunStore } from '../spec/run-store.js';
import type { AgentOptions } from './agent-options.js';
import { checkOptions, type RunOptions, type RunResult } from './loop/run.js';
import { resolveAgent } from './resolve-agent.js';
import { type ResumeOptions, resumeRun } from './resume.js';
import { agentRunMap, runRegistry } from './run/cancellation.js';
import { parentRunIn } from './run/child-runs.js';
import { newRunId } from './run/run-id.js';
import { sessionSettingsOf } from './run/session-options.js';
import { runOnSession } from './session-run.js';
import { settleSession } from './sessions/session-settle.js';
import { executeRun } from './start-run.js';
import { type AgentStream, createAgentStream, type StreamOptions } from './stream/agent-stream.js';

/** An agent: a model, tools and policies, ready to run. */
export interface Agent<Output = string> {
  readonly name: string;
  /** The run store that makes its runs durable, as given to `agent()`; absent when its runs are not durable. */
  readonly store?: RunStore;
  /**
   * Runs the agent on a prompt, or on a conversation so far. Always resolves with a {@link RunResult} in a terminal
   * state (`completed`, `failed`, `interrupted`, `cancelled`); rejects only with `config.invalid` for invalid
   * arguments (a bad option, an empty conversation, a run id already in use).
   *
   * With `sessionId` (and a `store`), the run goes on the session's conversation and appends its turns to it when it
   * completes (`result.session` says what became of them). One run at a time holds a session: a second one waits for
   * the first to end (`sessionBusy: 'wait'`, up to `sessionWaitMs`) or rejects at once (`'fail'`) with
   * `store.conflict`, before anything ran; so it does when the run holding the session is interrupted or its process
   * stopped (resume or cancel that run first). It rejects with `store.unavailable` when the session cannot be loaded,
   * and with `run.cancelled` when `signal` aborts while it waits.
   *
   * With the agent's `tenants` limits, a run beyond its tenant's limit waits for a place first (in order), and
   * rejects with `policy.bulkhead_full`, before anything ran, when its tenant's queue is full or it waited
   * `tenants.maxWaitMs` (see `TenantOptions`).
   */
  run(input: string | readonly Message[], options?: RunOptions): Promise<RunResult<Output>>;
  /**
   * Runs the agent as `run` does (same options, sessions, durability, approvals and cancellation) and returns at once
   * a stream of the run's typed parts (`StreamPart`): text and reasoning deltas, tool calls as the model writes
   * them, tool results, step boundaries, retries, fallbacks, recoveries, approvals waited for, the error, and last the
   * `finish` part with the result. Iterate it with `for await`, or read `textStream` or `toReadableStream()`;
   * `result` resolves as `run()` would. Leaving the loop early, or aborting `signal`, cancels the run (`result` settles
   * `cancelled`). The model streams. A reader slower than the run never makes keel buffer without bound: past
   * `StreamOptions.highWaterMark` parts (1_000) deltas are merged and the run waits between steps for the reader.
   *
   * @example
   *   const stream = assistant.stream('Weather in Paris?');
   *   for await (const part of stream) if (part.type === 'text-delta') process.stdout.write(part.delta);
   *   const result = await stream.result;
   */
  stream(input: string | readonly Message[], options?: StreamOptions): AgentStream<Output>;
  /**
   * Continues a stored run (the agent needs a `store`) from its last checkpoint, in this process or another: after a
   * crash, a store outage, or an interruption for approvals or decisions. A checkpointed model response is never
   * requested again; a completed tool call is replayed from the ledger, never executed again; a call that may have
   * run is executed again only if its tool is idempotent (with the same idempotency key), else the run is
   * interrupted with a pending decision (`decisions` answers it). A run that has already ended resolves with its
   * stored result, calling nothing.
   *
   * Rejects before anything runs with `config.invalid` (no store, bad options, a key that is not pending, a state
   * from a newer keel), `store.not_found` (unknown run), `store.conflict` (another live process, or this one, runs
   * it), `store.unavailable`, or the error of a tool source that cannot list its tools for the first time (an MCP
   * server that does not start: `tool.unavailable`; the run is left as it was). From then on it resolves like `run`.
   * A run on a session appends its turns to it when the resume completes it (or, for a run that had completed without
   * appending them, right away).
   */
  resume(runId: string, options?: ResumeOptions): Promise<RunResult<Output>>;
  /**
   * Cancels one of this agent's runs in progress; false when it has none with this id. A run still waiting for its
   * tenant's place (the agent's `tenants` limits) has not started: its `signal` cancels it, not this.
   */
  cancel(runId: string, reason?: string): boolean;
  /** Subscribes to the events of every run of this agent. */
  readonly onEvent: Event<RunEvent>;
  /**
   * The agent's breakers by name (`provider/model`, `tool:<name>`): they span runs. Breakers of tools a tool source
   * adds later join the map when the agent first lists them.
   */
  readonly breakers: ReadonlyMap<string, CircuitBreaker>;
}

/**
 * Makes an agent. Options are checked at once (`config.invalid` says what to fix). Breakers live on the agent and
 * span its runs; everything else a run needs (its state, abort switch, retry budget) is made per run.
 *
 * @example
 *   const assistant = agent({
 *     model: openai('gpt-4.1-mini'),
 *     fallbacks: [anthropic('claude-haiku-4-5')],
 *     tools: [weather],
 *     limits: { maxTurns: 12, timeoutMs: 120_000 },
 *     store: new SqliteRunStore('.keel/keel.db'),   // optional: makes runs durable and resumable
 *   });
 *   const result = await assistant.run('Weather in Paris?', { signal });
 *   if (result.status === 'completed') console.log(result.output);
 *   else console.error(result.error?.code, result.report.errors.byCode);
 */
export function agent<Output = string>(options: AgentOptions<Output>): Agent<Output> {
  const runtime = resolveAgent(options);
  const runs = agentRunMap();
  const start = (input: string | readonly Message[], runOptions?: RunOptions) => {
    const session = sessionSettingsOf(runOptions);
    if (session === undefined) return executeRun<Output>(runtime, runRegistry, runs, input, runOptions);
    return runOnSession<Output>(runtime, runRegistry, runs, input, runOptions!, session);
  };
  const gate = runtime.tenants;
  const run = async (input: string | readonly Message[], runOptions?: RunOptions) => {
    // A child run goes within its parent's place: holding one of its own could wait on its parent forever.
    if (gate === undefined || parentRunIn(runOptions ?? {}) !== undefined) return start(input, runOptions);
    checkOptions(runOptions ?? {});
    const release = await gate.acquire(runOptions?.tenant ?? DEFAULT_TENANT, runOptions?.signal);
    try {
      return await start(input, runOptions);
    } finally {
      release();
    }
  };
  return Object.freeze({
    name: runtime.name,
    ...(runtime.durability === undefined ? {} : { store: runtime.durability.store }),
    run,
    stream: (input: string | readonly Message[], streamOptions?: StreamOptions) =>
      createAgentStream<Output>((runOptions) => run(input, runOptions), streamOptions, newRunId),
    resume: async (runId: string, resumeOptions?: ResumeOptions) =>
      settleSession(runtime, await resumeRun<Output>(runtime, runRegistry, runs, runId, resumeOptions)),
    cancel(runId: string, reason?: string): boolean {
      const run = runs.get(runId);
      return run === undefined ? false : run.cancel(reason);
    },
    onEvent: runtime.events.event,
    breakers: runtime.breakers,
  });
}
