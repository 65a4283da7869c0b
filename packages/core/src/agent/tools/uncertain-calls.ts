import { isControlSignal } from '../../errors/control.js';
import { KeelError } from '../../errors/keel-error.js';
import type { ReconcileResult, ToolResult } from '../../spec/tool.js';
import { parseToolArguments } from '../correction/correction.js';
import type { ToolSlot } from '../run/agent-runtime.js';
import { notRepeatedResult } from '../run/pending-decision.js';
import { increment, uncertainCountsOf } from '../run/report.js';
import type { RunContext } from '../run/run-context.js';
import { type PendingToolCall, recordToolCallCompleted, type UncertainCall } from '../run/run-state.js';
import { toolError, toolSuccess } from '../run/tool-result.js';
import { argumentsKeyOf, uncertainCallOf } from '../run/uncertain-call.js';
import { provesNothingRan } from './tool-call.js';

/** Network failures that happen before a request is sent: the call cannot have taken effect. */
const NOT_SENT_SYSTEM_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * Whether a failed call of a tool that is not idempotent may have taken effect: it timed out (`tool.timeout`,
 * `network.timeout`, `policy.timeout`), its connection dropped once it may have been sent (`network.connection`,
 * other than a refused connection or a name that did not resolve), or its server died while it ran (`tool.unavailable`
 * with `data.phase: 'in-flight'`, as MCP reports it). Other failures say the tool answered, or never started.
 */
export function outcomeIsUnknown(error: KeelError): boolean {
  switch (error.code) {
    case 'tool.timeout':
    case 'network.timeout':
    case 'policy.timeout':
      return true;
    case 'network.connection': {
      const systemCode = error.data.systemCode;
      return (
        !provesNothingRan(error) && !(typeof systemCode === 'string' && NOT_SENT_SYSTEM_CODES.has(systemCode))
      );
    }
    case 'tool.unavailable':
      return error.data.phase === 'in-flight';
    default:
      return false;
  }
}

/**
 * Records that `pending`'s outcome is unknown (its failure was `cause`) and returns what the model is told: a
 * `tool.outcome_unknown` error, not retryable, whose guidance says not to repeat the call.
 */
export function recordUnknownOutcome(
  run: RunContext,
  pending: PendingToolCall,
  cause: KeelError,
): ToolResult {
  const toolName = pending.call.name;
  run.state.uncertainCalls = [
    ...(run.state.uncertainCalls ?? []),
    uncertainCallOf(pending, run.state.step, cause.code),
  ];
  const counts = uncertainCountsOf(run.state.report);
  counts.total++;
  increment(counts.byTool, toolName);
  return toolError(
    new KeelError(
      'tool.outcome_unknown',
      `The call to "${toolName}" failed with ${cause.code} after it may have taken effect: its outcome is unknown`,
      {
        provider: toolName,
        data: { toolName, outcome: 'unknown', errorCode: cause.code },
        cause,
        guidance:
          'The call may or may not have taken effect. Do not call it again with the same arguments: it could happen ' +
          'twice. Check its effect another way, or tell the user the outcome is unknown.',
      },
    ),
  );
}

/** The earlier call with an unknown outcome that `pending` (of a tool that is not idempotent) would repeat, if any. */
export function repeatedUncertainCall(run: RunContext, pending: PendingToolCall): UncertainCall | undefined {
  const uncertain = run.state.uncertainCalls;
  if (uncertain === undefined || uncertain.length === 0) return undefined;
  const argumentsKey = argumentsKeyOf(pending.call.arguments);
  return uncertain.find(
    (entry) => entry.toolName === pending.call.name && entry.argumentsKey === argumentsKey,
  );
}

/** Forgets an earlier call whose outcome is now known (or that a person chose to repeat). */
export function settleUncertainCall(run: RunContext, earlier: UncertainCall): void {
  const remaining = (run.state.uncertainCalls ?? []).filter((entry) => entry !== earlier);
  if (remaining.length === 0) delete run.state.uncertainCalls;
  else run.state.uncertainCalls = remaining;
}

/**
 * Asks the tool's `reconcile` whether the call keyed `idempotencyKey` took effect, bounded by the tool's timeout.
 * Undefined when the tool has none, or it failed, timed out or answered something else: the outcome stays unknown.
 * Cancellation rejects with the run's abort reason.
 */
export async function reconcileCall(
  run: RunContext,
  slot: ToolSlot,
  idempotencyKey: string,
  input: unknown,
): Promise<ReconcileResult | undefined> {
  const reconcile = slot.tool.reconcile;
  if (reconcile === undefined) return undefined;
  try {
    const found = await slot.timeout.execute(
      async (timed) => reconcile(input, { idempotencyKey, signal: timed.signal }),
      run.abort,
    );
    if (found?.happened === true) return { happened: true, output: found.output };
    if (found?.happened === false) return { happened: false };
    return undefined;
  } catch (thrown) {
    if (isControlSignal(thrown) || run.abort.aborted)
      throw run.abort.aborted ? run.abort.signal.reason : thrown;
    return undefined;
  }
}

/** What to do with a call that may repeat an earlier one whose outcome is unknown (see {@link checkRepeat}). */
export type RepeatVerdict =
  | { readonly kind: 'run' }
  | { readonly kind: 'answer'; readonly result: ToolResult }
  | { readonly kind: 'interrupt'; readonly repeatOf: string };

const RUN: RepeatVerdict = Object.freeze({ kind: 'run' });

/**
 * Checks a call of a tool that is not idempotent, about to run, against the run's calls whose outcome is unknown. A
 * call that repeats none (another tool, other arguments) runs. A repeat a person chose to `execute` runs, and the
 * earlier call is forgotten. Otherwise the tool's `reconcile` is asked about the earlier call: it happened (the repeat
 * is answered with its output, nothing runs) or it did not (the repeat runs). When it cannot tell, the agent's
 * `uncertainCalls` policy decides: the run interrupts, or the repeat is refused.
 */
export async function checkRepeat(
  run: RunContext,
  slot: ToolSlot,
  pending: PendingToolCall,
  input: unknown,
): Promise<RepeatVerdict> {
  const earlier = repeatedUncertainCall(run, pending);
  if (earlier === undefined) return RUN;
  if (pending.decision === 'execute') {
    settleUncertainCall(run, earlier);
    return RUN;
  }
  const found = await reconcileCall(run, slot, earlier.idempotencyKey, input);
  const counts = uncertainCountsOf(run.state.report);
  if (found !== undefined) {
    counts.reconciled++;
    settleUncertainCall(run, earlier);
    return found.happened ? { kind: 'answer', result: toolSuccess(found.output) } : RUN;
  }
  counts.blocked++;
  if (run.agent.uncertainCalls === 'refuse') {
    return {
      kind: 'answer',
      result: notRepeatedResult(pending.call.name, earlier.idempotencyKey, 'refused'),
    };
  }
  return { kind: 'interrupt', repeatOf: earlier.idempotencyKey };
}

/**
 * On resume, a call the process died in, of a tool that is not idempotent and has `reconcile`, with no decision yet:
 * asks `reconcile` about it (under its own idempotency key). It happened: the call is completed with the output
 * (checkpointed, so the ledger holds it). It did not: the call may run again, as if a person chose `execute`. Resolves
 * whether the call is settled; false leaves it for a person's decision.
 */
export async function reconcileStartedCall(run: RunContext, pending: PendingToolCall): Promise<boolean> {
  const slot = run.agent.tools.get(pending.call.name);
  if (slot?.tool.reconcile === undefined) return false;
  const parsed = parseToolArguments(pending.call.name, pending.call.arguments);
  if (!parsed.success) return false;
  let input: unknown;
  try {
    const validation = await slot.tool.validate(parsed.value);
    if (!validation.success) return false;
    input = validation.value;
  } catch (thrown) {
    if (isControlSignal(thrown)) throw thrown;
    return false;
  }
  const found = await reconcileCall(run, slot, pending.idempotencyKey, input);
  if (found === undefined) return false;
  uncertainCountsOf(run.state.report).reconciled++;
  if (!found.happened) {
    pending.decision = 'execute';
    return true;
  }
  recordToolCallCompleted(pending, toolSuccess(found.output));
  if (run.checkpoints) {
    await run.checkpoint({
      kind: 'tool-call-completed',
      step: run.state.step,
      callIndex: pending.callIndex,
      idempotencyKey: pending.idempotencyKey,
      toolName: pending.call.name,
    });
  }
  return true;
}
