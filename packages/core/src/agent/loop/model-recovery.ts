import type { ErrorCode } from '../../errors/codes.js';
import { KeelError } from '../../errors/keel-error.js';
import type { RunContext } from '../run/run-context.js';
import { carrySessionTurns } from '../run/session-state.js';

/** Asks the conversation manager for a smaller conversation; true when it removed something. */
export async function reduceConversation(
  run: RunContext,
  error: KeelError,
  attempt: number,
): Promise<boolean> {
  const manager = run.agent.conversation;
  if (manager === undefined) return false;
  const { state } = run;
  const before = state.messages;
  const reduction = await manager.reduce(before, {
    reason: 'context_overflow',
    attempt,
    signal: run.abort.signal,
  });
  if (run.abort.aborted) throw run.abort.signal.reason;
  if (!reduction.reduced || !madeProgress(before, reduction.messages)) return false;
  carrySessionTurns(state, reduction.messages);
  state.messages = reduction.messages;
  state.report.contextReductions++;
  if (run.events.active) {
    run.events.emit({
      type: 'context-reduced',
      runId: state.runId,
      atMs: run.clock.now(),
      step: state.step,
      messagesBefore: before.length,
      messagesAfter: reduction.messages.length,
    });
  }
  run.countError(error);
  const pending = run.checkpoint({ kind: 'context-reduced', step: state.step });
  if (pending !== undefined) await pending;
  return true;
}

/** Fewer messages, or fewer characters: anything else would loop on the same overflow. */
function madeProgress(
  before: readonly { content: string }[],
  after: readonly { content: string }[],
): boolean {
  if (after.length < before.length) return true;
  const size = (messages: readonly { content: string }[]) =>
    messages.reduce((total, message) => total + message.content.length, 0);
  return size(after) < size(before);
}

/** A later model of the chain with a larger known context window than the current one, if any. */
export function largerModelIndex(run: RunContext): number | undefined {
  const models = run.agent.models;
  const current = models[run.state.modelIndex]!.provider.contextWindowTokens ?? 0;
  for (let index = run.state.modelIndex + 1; index < models.length; index++) {
    const window = models[index]!.provider.contextWindowTokens;
    if (window !== undefined && window > current) return index;
  }
  return undefined;
}

/** Moves the run to another model of the chain, for this step and the rest of the run. */
export function switchModel(run: RunContext, index: number, errorCode: ErrorCode): void {
  const { state, agent } = run;
  const from = agent.models[state.modelIndex]!.key;
  const to = agent.models[index]!.key;
  state.modelIndex = index;
  state.report.fallbacks.total++;
  // Prompt caches belong to one model: a run that used one starts cold on the next.
  const cached = (state.usage.cachedInputTokens ?? 0) + (state.usage.cacheWriteInputTokens ?? 0) > 0;
  state.report.fallbacks.used.push({
    step: state.step,
    from,
    to,
    errorCode,
    ...(cached ? { promptCacheLost: true as const } : {}),
  });
  if (run.events.active) {
    run.events.emit({
      type: 'fallback-used',
      runId: state.runId,
      atMs: run.clock.now(),
      step: state.step,
      from,
      to,
      errorCode,
    });
  }
}

/**
 * The error again, with what the caller already received in `data.partialOutput`: `recovered` when stream recovery
 * was on (and its retries ran out or could not help), else the stream was not retried at all.
 */
export function withPartialOutput(error: KeelError, partialOutput: string, recovered: boolean): KeelError {
  const why = recovered
    ? 'after part of the answer was streamed'
    : 'after part of the answer was streamed; not retried';
  return new KeelError(error.code, `${error.message} (${why})`, {
    retryable: false,
    retryAfterMs: error.retryAfterMs,
    status: error.status,
    provider: error.provider,
    data: { ...error.data, partialOutput },
    guidance: error.guidance,
    cause: error,
  });
}

/**
 * Whether the run declines to wait for `error`'s Retry-After: one that ends at or after the run's deadline (the
 * retry would start too late to help) or beyond `retry.maxRetryAfterMs`. The loop then falls back at once, or fails
 * with the error (see {@link notWaitedFor}).
 */
export function declinesRetryAfter(run: RunContext, error: KeelError): boolean {
  const retryAfterMs = error.retryAfterMs;
  if (retryAfterMs === undefined || error.code === 'policy.circuit_open') return false;
  return (
    retryAfterMs >= run.state.deadlineAtMs - run.clock.now() || retryAfterMs > run.agent.retry.maxRetryAfterMs
  );
}

/**
 * The step's error when the run declined to wait for its Retry-After (see {@link declinesRetryAfter}) and no
 * fallback was left: the provider's code (`provider.rate_limited`, say) with the wait it asked for, in
 * `data.retryAfterMs` (and `retryAfterMs`), the run's time left in `data.remainingMs`, and `data.reason`:
 * `retry_after_past_deadline` or `retry_after_too_long` (`data.maxRetryAfterMs`). Any other error as it is.
 */
export function notWaitedFor(run: RunContext, error: KeelError, cause: KeelError): KeelError {
  if (!declinesRetryAfter(run, cause)) return error;
  const retryAfterMs = cause.retryAfterMs!;
  const remainingMs = Math.max(0, run.state.deadlineAtMs - run.clock.now());
  const { maxRetryAfterMs } = run.agent.retry;
  const pastDeadline = retryAfterMs >= remainingMs;
  const why = pastDeadline
    ? `it ends after the run's deadline (${remainingMs} ms left)`
    : `more than retry.maxRetryAfterMs (${maxRetryAfterMs} ms)`;
  return new KeelError(
    cause.code,
    `${cause.message} (asked to wait ${retryAfterMs} ms, not waited for: ${why})`,
    {
      retryable: cause.retryable,
      retryAfterMs,
      status: cause.status,
      provider: cause.provider,
      data: {
        ...cause.data,
        retryAfterMs,
        remainingMs,
        maxRetryAfterMs,
        reason: pastDeadline ? 'retry_after_past_deadline' : 'retry_after_too_long',
      },
      guidance: cause.guidance,
      cause: error,
    },
  );
}
