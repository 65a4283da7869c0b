import type { FaultKind, OutageWindow } from '@keel/simulated';

/** The name of a goal a scenario's scorecard is held to. */
export type GoalName =
  /**
   * At least 99.9% of runs complete (the whole answer, every tool run to its end). Given to scenarios whose faults a
   * resilient agent recovers from within the run.
   */
  | 'completion'
  /** Upstream requests at most 1.1x the minimum the completed runs needed. Not exercised when nothing completed. */
  | 'amplification'
  /**
   * While a model is down, once its breaker opened, at most one request (probe) per half-open interval. Not exercised
   * when no breaker opened during an outage, or it never went half-open before the outage ended and no request
   * reached the model after the opening.
   */
  | 'probes'
  /** No call of a tool with side effects ran twice. Not exercised when no such call ran. */
  | 'duplicates'
  /** Every run ended typed: no untyped failure, no run cut by the wall-clock cap. */
  | 'typed'
  /**
   * At most 1% of the upstream requests answered 429 by the server's quota (see `ChaosScenario.quota`). Not exercised
   * when no request was sent.
   */
  | 'refusals';

/** The most times a model that recalls failed calls (`recallFailedCalls`) calls one call again. */
export const MAX_RECALLS = 2;

/** What a scenario does to one model (the primary, or every fallback). */
export interface ModelFaults {
  /** Probability, per request, of each fault kind (drawn from the scenario's seed). Defaults to none. */
  rates?: Partial<Record<Exclude<FaultKind, 'none'>, number>>;
  /** Stretches of wall time the model is down, counted from the moment the first run starts. Defaults to none. */
  outages?: readonly OutageWindow[];
  /** The wait a `rate_limit` asks for (Retry-After), in milliseconds. Defaults to the server's 1000. */
  retryAfterMs?: number;
  /** How long a `hang` lasts before the connection is cut (a proxy's idle timeout). Defaults to forever. */
  hangMs?: number;
}

/** What a scenario does to every tool call (decided per run and per call, from the scenario's seed). */
export interface ToolFaults {
  /** Probability that a call fails before doing anything, as its upstream service answering 503. Defaults to 0. */
  failRate?: number;
  /** Probability that a call hangs until its signal aborts (forever if nothing aborts it). Defaults to 0. */
  hangRate?: number;
  /**
   * Probability that a call of a tool that is not idempotent takes effect and then times out: its body runs to its end
   * (the effect is recorded), then the call throws what an HTTP client's own timeout throws (a `TimeoutError`), as
   * when the answer is lost after the service acted. Idempotent tools are left alone. Defaults to 0.
   */
  timeoutAfterEffectRate?: number;
}

/**
 * A provider's rate limits, as the simulated server enforces them per API key (`@keel/simulated`'s `quota`): fixed
 * windows of `windowMs`, each allowing `requestsPerWindow` requests and `tokensPerWindow` tokens (prompt plus the
 * request's `max_tokens`); a request past either gets 429 with `retry-after-ms`, and every answer carries OpenAI's
 * `x-ratelimit-*` headers.
 */
export interface ScenarioQuota {
  readonly requestsPerWindow: number;
  readonly tokensPerWindow: number;
  /** The window's length in milliseconds (a minute compressed). */
  readonly windowMs: number;
}

/**
 * One seeded, deterministic failure scenario. Long waits of the real world (outages of minutes, Retry-After of
 * seconds, proxies' idle timeouts) are compressed into a few seconds of wall time by scaling the server's windows
 * and waits; nothing fakes the clock of the agent under test, since real HTTP is involved.
 */
export interface ChaosScenario {
  /** A short name, used by `--scenarios`. */
  readonly name: string;
  /** One line saying what goes wrong. */
  readonly title: string;
  /** What the scenario does, and how its times are compressed. */
  readonly description: string;
  /** Faults of the primary model. Defaults to none. */
  readonly primary?: ModelFaults;
  /** Faults of every fallback model. Defaults to none. */
  readonly fallbacks?: ModelFaults;
  /**
   * Makes the run nested: the subject is a parent agent whose one tool is a child agent (keel: `agentTool`; the OpenAI
   * Agents SDK: `agent.asTool()`), and these are the faults of the child's models (its primary and its fallbacks, on
   * models of their own: `sim-child`, `sim-child-fallback`, ...). `primary` and `fallbacks` stay the parent's; tool
   * faults reach the child's tools, the only ones. Subjects that cannot nest skip the scenario. Defaults to none: one
   * agent.
   */
  readonly child?: ModelFaults;
  /**
   * In a nested scenario, the parent hands the conversation over to the child (keel: a `handoff`; the OpenAI Agents
   * SDK: `handoffs`), which then answers, instead of calling it as a tool. Subjects that cannot hand over skip the
   * scenario. Defaults to false.
   */
  readonly handoff?: boolean;
  /** Whether the subject gets its fallback models. Defaults to true. */
  readonly fallbacksOffered?: boolean;
  /**
   * Gives the primary model a context window between the first prompt of a fault-free run and its largest one (so
   * the conversation outgrows it mid-run), and the fallbacks a window four times the largest. Defaults to false.
   */
  readonly tightContextWindow?: boolean;
  /** Faults of every tool call. Defaults to none. */
  readonly tools?: ToolFaults;
  /**
   * Makes the model call a tool again, with the same arguments, after the call failed, whatever the error says (at
   * most {@link MAX_RECALLS} times per call), as models do after a timeout. Defaults to false: the simulated model's
   * default brain, which calls again only with corrected arguments.
   */
  readonly recallFailedCalls?: boolean;
  /**
   * Runs the runs in a worker process that is killed (SIGKILL) mid-run; a new worker then resumes them (durable
   * subjects) or starts them again (the others). Defaults to false.
   */
  readonly crash?: boolean;
  /**
   * Rate limits the server enforces on the subject's API key (every process of the subject shares it). Defaults to
   * none.
   */
  readonly quota?: ScenarioQuota;
  /**
   * Runs the runs in this many worker processes at once (run `i` in process `i % workers`), started together once
   * every one is ready: a fleet. A subject without a worker module is skipped. Defaults to none: the runs run in this
   * process.
   */
  readonly workers?: number;
  /**
   * Runs every subject streamed (keel: `onTextDelta`; the AI SDK: `streamText`; the OpenAI Agents SDK: `stream:
   * true`), the answer consumed as it arrives. Defaults to false.
   */
  readonly stream?: boolean;
  /** Runs start evenly spread over this many milliseconds. */
  readonly arrivalMs: number;
  /**
   * How the minimum number of upstream requests is counted: `clean` is what fault-free runs need; `schedule` adds,
   * in expectation, one request per fault the primary's rates put in their way (each faulted request needs one more).
   */
  readonly minimum: 'clean' | 'schedule';
  /** The goals this scenario's scorecard is held to. */
  readonly goals: readonly GoalName[];
}
