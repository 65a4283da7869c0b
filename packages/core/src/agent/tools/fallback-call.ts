import { isControlSignal } from '../../errors/control.js';
import { type JsonValue, KeelError } from '../../errors/keel-error.js';
import type { ToolDegradation, ToolFallbackContext } from '../../spec/tool.js';
import { formatIssues } from '../correction/correction.js';
import type { FallbackSlot, ToolSlot } from '../run/agent-runtime.js';
import { countDegradation } from '../run/report.js';
import type { RunContext } from '../run/run-context.js';
import type { PendingToolCall } from '../run/run-state.js';
import { executeTool, provesNothingRan, toolFailure } from './tool-call.js';
import { fallbackApplies } from './tool-fallback.js';

/** A call's output, and how it is degraded when a fallback produced it. */
export interface CallOutcome {
  readonly output: unknown;
  readonly degraded?: ToolDegradation;
}

/** Longest failure message quoted in a default `degraded.reason`. */
const REASON_MESSAGE_CHARS = 200;

/**
 * Runs a call (see `executeTool`) and, when it fails, the tool's fallbacks in order, each matched against the latest
 * failure, until one answers: its output comes back with a {@link ToolDegradation}, a `tool-degraded` event is
 * emitted and the report counts it. A fallback tool gets the call's parsed arguments (validated by its own schema) and
 * idempotency key; for a tool that is not idempotent it runs only when the failure proves nothing ran. Control
 * signals and cancellation pass untouched. When no fallback matched, the call's own failure is rethrown as it was;
 * when every matching one failed, the last failure is, with the chain in `data.failures`.
 */
export async function executeWithFallbacks(
  run: RunContext,
  slot: ToolSlot,
  pending: PendingToolCall,
  input: unknown,
  parsedArguments: unknown,
): Promise<CallOutcome> {
  if (slot.fallbacks.length === 0) return { output: await executeTool(run, slot, pending, input) };
  let primaryFailure: KeelError;
  try {
    return { output: await executeTool(run, slot, pending, input) };
  } catch (thrown) {
    if (isControlSignal(thrown) || run.abort.aborted || !KeelError.isInstance(thrown)) throw thrown;
    primaryFailure = thrown;
  }
  let latest = primaryFailure;
  const failures: JsonValue[] = [failureOf(slot.key, latest)];
  for (const entry of slot.fallbacks) {
    if (!fallbackApplies(entry.fallback, latest) || !safeToRun(slot, entry, latest)) continue;
    try {
      const output =
        entry.slot === undefined
          ? await computeValue(run, slot, pending, input, entry, latest)
          : await callFallbackTool(run, entry.slot, pending, parsedArguments);
      const degraded: ToolDegradation = {
        from: slot.key,
        to: entry.name,
        errorCode: primaryFailure.code,
        reason: entry.fallback.reason ?? defaultReason(slot.key, entry.name, primaryFailure),
      };
      degradationOf(run, pending, degraded);
      return { output, degraded };
    } catch (thrown) {
      if (isControlSignal(thrown) || run.abort.aborted) throw thrown;
      latest = KeelError.isInstance(thrown) ? thrown : toolFailure(thrown, entry.name);
      failures.push(failureOf(entry.name, latest));
    }
  }
  if (latest === primaryFailure) throw primaryFailure;
  throw new KeelError(latest.code, `${slot.key} and its fallbacks failed: ${summary(failures)}`, {
    retryable: latest.retryable,
    retryAfterMs: latest.retryAfterMs,
    status: latest.status,
    provider: latest.provider,
    data: { failures },
    guidance: latest.guidance,
    cause: latest,
  });
}

/**
 * Whether a fallback may run after `failure`: a value has no side effect to repeat; another tool may, so after a
 * tool that is not idempotent it runs only when the failure proves the call never started.
 */
function safeToRun(slot: ToolSlot, entry: FallbackSlot, failure: KeelError): boolean {
  return (
    entry.slot === undefined ||
    slot.tool.idempotent ||
    provesNothingRan(failure) ||
    failure.code === 'policy.circuit_open'
  );
}

async function callFallbackTool(
  run: RunContext,
  fallbackSlot: ToolSlot,
  pending: PendingToolCall,
  parsedArguments: unknown,
): Promise<unknown> {
  const validation = await fallbackSlot.tool.validate(parsedArguments);
  if (!validation.success) {
    throw new KeelError(
      'tool.invalid_input',
      `The fallback tool ${fallbackSlot.key} rejected the call's arguments:\n${formatIssues(validation.issues)}`,
      { provider: fallbackSlot.key },
    );
  }
  return executeTool(run, fallbackSlot, pending, validation.value);
}

/** Runs a value fallback under the failed tool's timeout, with the call's context and the failure it answers. */
async function computeValue(
  run: RunContext,
  slot: ToolSlot,
  pending: PendingToolCall,
  input: unknown,
  entry: FallbackSlot,
  error: KeelError,
): Promise<unknown> {
  const compute = entry.fallback.value!;
  try {
    return await slot.timeout.execute((timed) => {
      const context: ToolFallbackContext = {
        get signal() {
          return timed.signal;
        },
        idempotencyKey: pending.idempotencyKey,
        runId: run.runId,
        step: run.state.step,
        callIndex: pending.callIndex,
        attempt: pending.attempts,
        error,
      };
      return compute(input, context);
    }, run.abort.signal);
  } catch (thrown) {
    if (isControlSignal(thrown) || run.abort.aborted) throw thrown;
    const failure = KeelError.isInstance(thrown) ? thrown : toolFailure(thrown, entry.name);
    run.countError(failure);
    throw failure;
  }
}

function degradationOf(run: RunContext, pending: PendingToolCall, degraded: ToolDegradation): void {
  countDegradation(run.state.report, degraded.from);
  if (!run.events.active) return;
  run.events.emit({
    type: 'tool-degraded',
    runId: run.runId,
    atMs: run.clock.now(),
    step: run.state.step,
    callIndex: pending.callIndex,
    toolName: degraded.from,
    fallback: degraded.to,
    errorCode: degraded.errorCode,
    reason: degraded.reason,
  });
}

function defaultReason(from: string, to: string, error: KeelError): string {
  const message =
    error.message.length <= REASON_MESSAGE_CHARS
      ? error.message
      : `${error.message.slice(0, REASON_MESSAGE_CHARS)}…`;
  return `${from} failed (${error.code}: ${message}); this result comes from ${to} instead and may be incomplete or out of date.`;
}

function failureOf(name: string, error: KeelError): JsonValue {
  return { name, code: error.code, message: error.message };
}

function summary(failures: readonly JsonValue[]): string {
  return failures
    .map((failure) => {
      const { name, code, message } = failure as { name: string; code: string; message: string };
      return `${name} (${code}: ${message})`;
    })
    .join('; ');
}
