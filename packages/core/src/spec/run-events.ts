import type { ErrorCode } from '../errors/codes.js';
import type { SerializedError } from '../errors/serialize.js';
import type { GuardrailStage, GuardrailTrigger } from './guardrail.js';
import type { FinishReason, Message, ToolCall, Usage } from './model.js';
import type { StopReason, TerminalStatus } from './stop-reason.js';
import type { ToolResult } from './tool.js';

/** What every run event carries. */
interface RunEventBase {
  readonly runId: string;
  /** When the event happened, from the agent's clock (ms since the epoch). */
  readonly atMs: number;
}

/** Which kind of dependency a retry, breaker or error concerns (`store`: the run store of a durable run). */
export type DependencyKind = 'model' | 'tool' | 'store';

/** Kinds of self-correction the loop asks of the model. */
export type CorrectionEventKind =
  | 'unknown_tool'
  | 'invalid_arguments'
  | 'malformed_json'
  | 'invalid_output'
  | 'retry_step'
  | 'continue_output';

/**
 * Everything a run reports while it runs, as a union told apart by `type` (noun-verb, like `tool-call-end`). Events
 * are built only when somebody listens, so subscribing costs the run something and not subscribing costs nothing.
 */
export type RunEvent =
  | (RunEventBase & {
      readonly type: 'run-start';
      readonly agentName: string;
      /** For a child run (started by an agent tool or a handoff): the run that started it. */
      readonly parentRunId?: string;
      /** For a child run: the idempotency key of the parent's tool call that started it. */
      readonly parentCallKey?: string;
      /** The tenant the run spends for (the run option `tenant`); absent for none. */
      readonly tenant?: string;
      /** Entries observers keep with the run; see {@link RunAnnotations}. */
      readonly annotations: RunAnnotations;
    })
  | (RunEventBase & {
      /** A run restored from its last checkpoint goes on (in place of `run-start`). */
      readonly type: 'run-resumed';
      readonly agentName: string;
      /** For a child run (started by an agent tool or a handoff): the run that started it. */
      readonly parentRunId?: string;
      /** For a child run: the idempotency key of the parent's tool call that started it. */
      readonly parentCallKey?: string;
      /** The tenant the run spends for (the run option `tenant`); absent for none. */
      readonly tenant?: string;
      readonly step: number;
      /** What observers kept with the run's earlier attempts, and may add to; see {@link RunAnnotations}. */
      readonly annotations: RunAnnotations;
    })
  | (RunEventBase & {
      readonly type: 'run-end';
      readonly status: TerminalStatus;
      readonly stopReason: StopReason;
      readonly durationMs: number;
      readonly error?: SerializedError;
    })
  | (RunEventBase & {
      readonly type: 'model-call-start';
      readonly step: number;
      /** `provider/model`. */
      readonly model: string;
      readonly attempt: number;
      /** The conversation sent: the run's live array, to be read in the listener (copy it to keep it). */
      readonly messages: readonly Message[];
    })
  | (RunEventBase & {
      readonly type: 'model-call-end';
      readonly step: number;
      readonly model: string;
      readonly attempt: number;
      readonly durationMs: number;
      readonly outcome: 'success' | 'error';
      readonly finishReason?: FinishReason;
      readonly usage?: Usage;
      readonly errorCode?: ErrorCode;
      /** On success: the model that answered, as the provider reported it. */
      readonly responseModel?: string;
      /** On success: the upstream request's id (`x-request-id`, `request-id`), when the provider sent one. */
      readonly requestId?: string;
      /** On success: the answer's text. */
      readonly content?: string;
      /** On success: the tool calls the model asked for. */
      readonly toolCalls?: readonly ToolCall[];
      /** On success: what the call cost in US dollars, by the agent's price table; absent for a model without a price. */
      readonly costUsd?: number;
    })
  | (RunEventBase & {
      readonly type: 'retry-scheduled';
      readonly step: number;
      readonly target: DependencyKind;
      /** `provider/model` or the tool's name. */
      readonly name: string;
      /** The attempt that failed. */
      readonly attempt: number;
      readonly delayMs: number;
      readonly errorCode: ErrorCode;
    })
  | (RunEventBase & {
      readonly type: 'fallback-used';
      readonly step: number;
      readonly from: string;
      readonly to: string;
      /** The failure that made the loop switch models. */
      readonly errorCode: ErrorCode;
    })
  | (RunEventBase & {
      readonly type: 'breaker-opened' | 'breaker-closed' | 'breaker-half-opened';
      readonly target: DependencyKind;
      readonly name: string;
    })
  | (RunEventBase & {
      readonly type: 'tool-call-start';
      readonly step: number;
      readonly callIndex: number;
      readonly toolName: string;
      readonly idempotencyKey: string;
      /** The model's id for the call (for telemetry; keel keys calls by `idempotencyKey`). */
      readonly toolCallId: string;
      /** The arguments' JSON text, after the tool-call guardrails. */
      readonly arguments: string;
    })
  | (RunEventBase & {
      /** A running tool reported how far it has come (`ToolContext.reportProgress`). */
      readonly type: 'tool-call-progress';
      readonly step: number;
      readonly callIndex: number;
      readonly toolName: string;
      readonly idempotencyKey: string;
      readonly progress: number;
      readonly total?: number;
      readonly message?: string;
    })
  | (RunEventBase & {
      readonly type: 'tool-call-end';
      readonly step: number;
      readonly callIndex: number;
      readonly toolName: string;
      readonly idempotencyKey: string;
      readonly status: 'success' | 'error';
      readonly errorCode?: ErrorCode;
      readonly durationMs: number;
      /** The model's id for the call. */
      readonly toolCallId: string;
      /** What the model is shown (before it is cut to `maxToolResultChars`). */
      readonly result: ToolResult;
    })
  | (RunEventBase & {
      /** A failed tool call was answered by one of its fallbacks: the model gets a result marked degraded. */
      readonly type: 'tool-degraded';
      readonly step: number;
      readonly callIndex: number;
      /** The tool whose call failed. */
      readonly toolName: string;
      /** The fallback that answered. */
      readonly fallback: string;
      /** The code of the tool's own failure. */
      readonly errorCode: ErrorCode;
      readonly reason: string;
    })
  | (RunEventBase & {
      /**
       * The conversation was handed over (a handoff tool called at `step`): agent `to` answers in a child run
       * instead of agent `from`, whose run this is.
       */
      readonly type: 'handoff';
      readonly step: number;
      readonly from: string;
      readonly to: string;
    })
  | (RunEventBase & {
      readonly type: 'correction';
      readonly step: number;
      readonly kind: CorrectionEventKind;
      readonly toolName?: string;
      readonly message: string;
    })
  | (RunEventBase & {
      readonly type: 'guardrail-tripped';
      readonly stage: GuardrailStage;
      readonly guardrail: string;
      readonly action: 'block' | 'redact';
      readonly trigger: GuardrailTrigger;
    })
  | (RunEventBase & {
      readonly type: 'context-reduced';
      readonly step: number;
      readonly messagesBefore: number;
      readonly messagesAfter: number;
    })
  | (RunEventBase & {
      /** A durable run's checkpoint was saved: ledger entry, lease renewal and state, store retries included. */
      readonly type: 'checkpoint-saved';
      readonly step: number;
      /** The transition saved: a `RunTransition` kind such as `model-response-received`. */
      readonly transition: string;
      readonly durationMs: number;
    })
  | (RunEventBase & {
      /** A durable run's checkpoint could not be saved (after its store retries): the run halts. */
      readonly type: 'checkpoint-failed';
      readonly step: number;
      readonly transition: string;
      readonly durationMs: number;
      readonly errorCode: ErrorCode;
    })
  | (RunEventBase & {
      /**
       * A model stream that broke after part of the answer was delivered was recovered: `continued` means the new
       * answer goes on after the `keptCharacters` already delivered (nothing is sent twice); `restarted` means the
       * text of this step delivered so far is void and the answer starts again from its first character.
       */
      readonly type: 'stream-recovered';
      readonly step: number;
      /** The failure that broke the stream. */
      readonly errorCode: ErrorCode;
      readonly mode: 'continued' | 'restarted';
      /** Characters of the step's text delivered before the break that still stand (0 when `restarted`). */
      readonly keptCharacters: number;
      /** `provider/model` of the model that goes on. */
      readonly model: string;
    })
  | (RunEventBase & { readonly type: 'text-delta'; readonly step: number; readonly delta: string })
  | (RunEventBase & {
      /**
       * A streamed model call broke after part of the answer reached the caller (`errorCode`), and a retry on `model`
       * recovered it: its answer `continued` the delivered text (`keptCharacters` of it kept; only what follows is
       * delivered), or `restarted` it (the step's text delivered so far is void; the new answer is delivered from its
       * start, `keptCharacters` 0).
       */
      readonly type: 'stream-recovered';
      readonly step: number;
      readonly errorCode: ErrorCode;
      readonly mode: 'continued' | 'restarted';
      readonly keptCharacters: number;
      readonly model: string;
    })
  | (RunEventBase & { readonly type: 'step-end'; readonly step: number; readonly toolCalls: number })
  | (RunEventBase & {
      /**
       * The agent's shared pace store (`pace: { store }`, Redis) could not answer (`errorCode`): this call to `model`
       * was paced by the process's own governor instead; the next call asks the shared store again.
       */
      readonly type: 'pace-store-unavailable';
      readonly step: number;
      readonly model: string;
      readonly errorCode: ErrorCode;
    });

/**
 * Small string entries observers keep with a run, such as the trace context of each of its attempts (so that a
 * resumed run can link to them). `run-start` and `run-resumed` hand them over; entries a listener adds there are saved
 * with the run's state (`RunState.annotations`) at its next checkpoint and handed back when it is resumed, in any
 * process. keel itself never reads them. Keep them few and short: they are part of every checkpoint.
 */
export type RunAnnotations = Record<string, string>;

/** The `type` of a {@link RunEvent}. */
export type RunEventType = RunEvent['type'];

/** A function that receives run events. A listener that throws is reported as a process warning. */
export type RunEventListener = (event: RunEvent) => void;
