import type { ErrorCode } from '../../errors/codes.js';
import type { KeelError } from '../../errors/keel-error.js';
import type { ToolResult } from '../../spec/tool.js';
import type { RunResult } from '../loop/run.js';
import type { PendingDecision } from '../run/pending-decision.js';

/**
 * One part of an agent's stream (`agent.stream()`), told apart by `type`. `step` is the run's step (from 1: one model
 * answer and the tool calls it asked for).
 *
 * - `step-start`: the step's first model call begins (`model`: `provider/model`).
 * - `text-delta`: a piece of the answer's text. Joined, the text deltas of the final step are the run's output
 *   (a `restarted` recovery voids the step's text before it, see `recovery`).
 * - `reasoning-delta`: a piece of the model's reasoning, when the provider streams it.
 * - `tool-call-start`, `tool-call-delta`, `tool-call-end`: a tool call the model is writing, its arguments' JSON
 *   text in pieces, and its whole arguments. `index` is its place among the step's calls. A start without an end
 *   belongs to an answer that broke: that call is never executed. Providers that do not stream calls give the three
 *   parts at once when the answer is complete.
 * - `tool-result`: a tool call ran (or failed; `result` is what the model is shown).
 * - `step-end`: the step ended (`toolCalls`: how many calls it ran).
 * - `retry`: a failed call (model, tool or store) is tried again after `delayMs`.
 * - `fallback`: the run switched models.
 * - `recovery`: a model stream broke after part of the answer was delivered and was recovered. `continued`: the
 *   answer goes on, nothing delivered is sent again (`keptCharacters` of it stand). `restarted`: the step's text
 *   delivered so far is void; a consumer drops what it showed of this step and shows the text that follows instead.
 * - `approval-required`: the run stopped `interrupted` to wait for decisions (approvals of tool calls, or calls whose
 *   outcome is uncertain): `pending` lists them; answer with `agent.resume(runId, { approvals })`.
 * - `error`: the run failed or was cancelled (`error.code` says why); the `finish` part follows.
 * - `finish`: the run's result, always the last part.
 */
export type StreamPart<Output = string> =
  | { readonly type: 'step-start'; readonly step: number; readonly model: string }
  | { readonly type: 'text-delta'; readonly step: number; readonly delta: string }
  | { readonly type: 'reasoning-delta'; readonly step: number; readonly delta: string }
  | {
      readonly type: 'tool-call-start';
      readonly step: number;
      readonly index: number;
      readonly toolCallId: string;
      readonly toolName: string;
    }
  | {
      readonly type: 'tool-call-delta';
      readonly step: number;
      readonly index: number;
      readonly toolCallId: string;
      readonly delta: string;
    }
  | {
      readonly type: 'tool-call-end';
      readonly step: number;
      readonly index: number;
      readonly toolCallId: string;
      readonly toolName: string;
      /** The arguments' whole JSON text, as the model wrote them. */
      readonly arguments: string;
    }
  | {
      readonly type: 'tool-result';
      readonly step: number;
      readonly index: number;
      readonly toolCallId: string;
      readonly toolName: string;
      readonly result: ToolResult;
    }
  | { readonly type: 'step-end'; readonly step: number; readonly toolCalls: number }
  | {
      readonly type: 'retry';
      readonly step: number;
      readonly target: 'model' | 'tool' | 'store';
      /** `provider/model` or the tool's name. */
      readonly name: string;
      /** The attempt that failed. */
      readonly attempt: number;
      readonly delayMs: number;
      readonly errorCode: ErrorCode;
    }
  | {
      readonly type: 'fallback';
      readonly step: number;
      readonly from: string;
      readonly to: string;
      readonly errorCode: ErrorCode;
    }
  | {
      readonly type: 'recovery';
      readonly step: number;
      readonly errorCode: ErrorCode;
      readonly mode: 'continued' | 'restarted';
      readonly keptCharacters: number;
      readonly model: string;
    }
  | { readonly type: 'approval-required'; readonly pending: readonly PendingDecision[] }
  | { readonly type: 'error'; readonly error: KeelError }
  | { readonly type: 'finish'; readonly result: RunResult<Output> };
