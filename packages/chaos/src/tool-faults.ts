import type { ReconcileContext, Tool, ToolContext } from '@keel/core';
import { canonicalJson, type EffectLedger } from './effect-ledger.js';
import type { ToolFaults } from './scenario.js';
import { chaosRunOf, drawAt } from './seeds.js';

/** What befalls one tool call. */
export type ToolFault = 'none' | 'fail' | 'hang' | 'timeout-after-effect';

/**
 * The fault of the `ordinal`-th call (from 0) of `tool` in run `runId`: a pure function of the scenario's seed, the
 * run, the tool (and whether it is `idempotent`: only other tools time out after their effect) and the position, so that every subject meets the same faults on the same calls however their runs
 * interleave.
 */
export function toolFaultAt(
  faults: ToolFaults | undefined,
  seed: number,
  runId: string,
  tool: string,
  ordinal: number,
  idempotent = true,
): ToolFault {
  const failRate = faults?.failRate ?? 0;
  const hangRate = faults?.hangRate ?? 0;
  const afterEffectRate = idempotent ? 0 : (faults?.timeoutAfterEffectRate ?? 0);
  if (failRate === 0 && hangRate === 0 && afterEffectRate === 0) return 'none';
  const draw = drawAt(ordinal, seed, runId, tool);
  if (draw < failRate) return 'fail';
  if (draw < failRate + hangRate) return 'hang';
  if (draw < failRate + hangRate + afterEffectRate) return 'timeout-after-effect';
  return 'none';
}

/** What {@link instrumentTools} needs. */
export interface ToolInstrumentation {
  faults: ToolFaults | undefined;
  seed: number;
  ledger: EffectLedger;
  /** Called once a call's effect is recorded (the crash worker reports it). Defaults to none. */
  onEffect?: (runId: string, tool: string) => void;
}

/**
 * The same tools, with the scenario's faults injected before each call runs, and each execution recorded in the
 * effect ledger when it starts and when it completes. A failing call throws what an HTTP client would for a 503
 * (`status: 503`), before doing anything; a hanging call waits for its signal and rejects with its reason; a call that
 * times out after its effect runs to its end, is recorded, then throws a `TimeoutError`. A tool's `reconcile` is kept
 * as it is (it looks the effect up; nothing is injected there).
 */
export function instrumentTools(tools: readonly Tool[], instrumentation: ToolInstrumentation): Tool[] {
  const ordinals = new Map<string, number>();
  return tools.map((original): Tool => {
    const execute = async (input: unknown, context: ToolContext): Promise<unknown> => {
      // A child agent's calls count in the chaos run that started it (see chaosRunOf).
      const runId = chaosRunOf(context.runId);
      const counter = `${runId}\u0000${original.name}`;
      const ordinal = ordinals.get(counter) ?? 0;
      ordinals.set(counter, ordinal + 1);
      const fault = toolFaultAt(
        instrumentation.faults,
        instrumentation.seed,
        runId,
        original.name,
        ordinal,
        original.idempotent,
      );
      if (fault === 'fail') {
        throw Object.assign(
          new Error(`${original.name}: the service behind the tool answered 503 Service Unavailable`),
          { status: 503 },
        );
      }
      if (fault === 'hang') await hangUntilAborted(context.signal);
      const effect = {
        runId,
        tool: original.name,
        key: `${runId}|${original.name}|${canonicalJson(input)}`,
        idempotent: original.idempotent,
        idempotencyKey: context.idempotencyKey,
      };
      instrumentation.ledger.record({ ...effect, phase: 'started', atMs: Date.now() });
      const output = await original.execute(input, context);
      instrumentation.ledger.record({ ...effect, phase: 'completed', atMs: Date.now() });
      instrumentation.onEffect?.(runId, original.name);
      // The service acted, and its answer is lost: the client's own timeout fires, as AbortSignal.timeout's does.
      if (fault === 'timeout-after-effect')
        throw new DOMException(`${original.name}: the answer did not arrive in time`, 'TimeoutError');
      return output;
    };
    // A copy that keeps the original's validation, schema, timeout and approval rule; only `execute` differs.
    return Object.freeze({
      name: original.name,
      description: original.description,
      inputSchema: original.inputSchema,
      idempotent: original.idempotent,
      validate: (input: unknown) => original.validate(input),
      execute,
      ...(original.timeoutMs === undefined ? {} : { timeoutMs: original.timeoutMs }),
      ...(original.needsApproval === undefined ? {} : { needsApproval: original.needsApproval }),
      ...(original.reconcile === undefined
        ? {}
        : {
            reconcile: async (input: unknown, context: ReconcileContext) => {
              const found = await original.reconcile!(input, context);
              // The tool found no effect under this key: its executions that never completed had none. Or it found
              // one: an execution killed before it recorded its end had completed it.
              instrumentation.ledger.record({
                phase: found.happened ? 'found' : 'absent',
                runId: '',
                tool: original.name,
                key: '',
                idempotent: original.idempotent,
                idempotencyKey: context.idempotencyKey,
                atMs: Date.now(),
              });
              return found;
            },
          }),
    });
  });
}

function hangUntilAborted(signal: AbortSignal | undefined): Promise<never> {
  return new Promise<never>((_, reject) => {
    if (signal === undefined) return;
    if (signal.aborted) return reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}
