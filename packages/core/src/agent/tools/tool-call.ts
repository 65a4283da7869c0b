import { toolFailure } from '../../errors/classify-tool.js';
import type { ErrorCode } from '../../errors/codes.js';
import { isControlSignal } from '../../errors/control.js';
import { KeelError } from '../../errors/keel-error.js';
import type { PolicyContext } from '../../policies/policy.js';
import { isPromiseLike } from '../../policies/promise.js';
import type { RetryPolicy } from '../../policies/retry.js';
import type { ToolProgress } from '../../spec/tool.js';
import type { ToolSlot } from '../run/agent-runtime.js';
import { isDirective } from '../run/directives.js';
import { underlyingError } from '../run/failure-rules.js';
import { countRetry } from '../run/report.js';
import type { RunContext } from '../run/run-context.js';
import type { PendingToolCall } from '../run/run-state.js';
import { ToolCallContext } from './tool-context.js';

export { toolFailure };

/**
 * Failures that prove the tool never started, so that retrying even a tool with side effects is safe: the tool said
 * it is unavailable, a local limit refused the call, or nothing accepted the connection.
 */
export function provesNothingRan(error: KeelError): boolean {
  switch (error.code) {
    case 'tool.unavailable':
    case 'policy.bulkhead_full':
    case 'policy.rate_limited':
      return true;
    case 'network.connection':
      return error.data.systemCode === 'ECONNREFUSED';
    default:
      return false;
  }
}

/**
 * Runs a tool call whose input is valid, under the run's retry policy for that tool (retrying only an idempotent
 * tool, or a failure that proves nothing ran), the tool's breaker and its timeout (`tool.timeout`). The tool's
 * context carries the call's idempotency key and a signal that aborts at once on cancellation or timeout (made only
 * if the tool reads it).
 *
 * Resolves with the tool's output; rejects with a KeelError (the underlying failure, not a retry wrapper), or with a
 * directive or the run's abort reason, as they are. A directive the tool returns is treated as thrown.
 */
export function executeTool(
  run: RunContext,
  slot: ToolSlot,
  pending: PendingToolCall,
  input: unknown,
): Promise<unknown> {
  run.watch(slot);
  const breaker = slot.breaker;
  return toolRetryOf(run, slot)
    .execute(
      (context) =>
        breaker === undefined
          ? invoke(run, slot, pending, input, context)
          : breaker.execute((admitted) => invoke(run, slot, pending, input, admitted), context),
      run.abort,
    )
    .catch((thrown: unknown) => {
      if (isControlSignal(thrown) || run.abort.aborted || !KeelError.isInstance(thrown)) throw thrown;
      throw underlyingError(thrown);
    });
}

function invoke(
  run: RunContext,
  slot: ToolSlot,
  pending: PendingToolCall,
  input: unknown,
  context: PolicyContext,
): Promise<unknown> {
  // Not an async function: a tool that answers synchronously (most in-process tools) then gives the timeout a
  // synchronous result, which needs no deadline, no listener on the run and no promise of its own (see `timeout`).
  return slot.timeout.execute((timed) => {
    // The first attempt was counted when the call started (and checkpointed): a resumed execution is told it is not
    // the first.
    if (context.attempt > 1) pending.attempts++;
    const toolContext = new ToolCallContext(
      timed,
      pending.idempotencyKey,
      run.runId,
      run.state.step,
      pending.callIndex,
      pending.attempts,
      run,
    );
    let running = true;
    if (run.events.active) {
      toolContext.reportProgress = (progress) => {
        if (running) emitProgress(run, slot.tool.name, pending, progress);
      };
    }
    let value: unknown;
    try {
      value = slot.tool.execute(input, toolContext);
    } catch (thrown) {
      running = false;
      throw executionFailure(thrown, timed, slot);
    }
    if (isPromiseLike(value)) {
      return Promise.resolve(value).then(
        (settled) => {
          running = false;
          return outputOf(settled);
        },
        (thrown: unknown) => {
          running = false;
          throw executionFailure(thrown, timed, slot);
        },
      );
    }
    running = false;
    return outputOf(value);
  }, context);
}

/** What a tool's failure becomes: a control signal, or anything thrown once its call was abandoned, as it is. */
function executionFailure(thrown: unknown, timed: PolicyContext, slot: ToolSlot): unknown {
  if (isControlSignal(thrown) || timed.aborted) return thrown;
  return toolFailure(thrown, slot.tool.name);
}

/** A tool's output; a directive it returns is treated as thrown. */
function outputOf(value: unknown): unknown {
  if (isDirective(value)) throw value;
  return value;
}

function emitProgress(
  run: RunContext,
  toolName: string,
  pending: PendingToolCall,
  progress: ToolProgress,
): void {
  if (!run.events.active) return;
  run.events.emit({
    type: 'tool-call-progress',
    runId: run.runId,
    atMs: run.clock.now(),
    step: run.state.step,
    callIndex: pending.callIndex,
    toolName,
    idempotencyKey: pending.idempotencyKey,
    progress: progress.progress,
    ...(progress.total === undefined ? {} : { total: progress.total }),
    ...(progress.message === undefined ? {} : { message: progress.message }),
  });
}

function toolRetryOf(run: RunContext, slot: ToolSlot): RetryPolicy {
  const name = slot.tool.name;
  run.toolRetries ??= new Map();
  const existing = run.toolRetries.get(name);
  if (existing !== undefined) return existing;
  const policy = run.agent.retry.makeToolRetry(run.budget, (error) => {
    run.countError(error);
    return error.retryable && (slot.tool.idempotent || provesNothingRan(error));
  });
  policy.onRetry((event) => {
    countRetry(run.state.report, 'tool', event.delayMs);
    if (run.events.active) emitRetry(run, name, event.attempt, event.delayMs, event.error.code);
  });
  run.toolRetries.set(name, policy);
  return policy;
}

function emitRetry(
  run: RunContext,
  name: string,
  attempt: number,
  delayMs: number,
  errorCode: ErrorCode,
): void {
  run.events.emit({
    type: 'retry-scheduled',
    runId: run.runId,
    atMs: run.clock.now(),
    step: run.state.step,
    target: 'tool',
    name,
    attempt,
    delayMs,
    errorCode,
  });
}
