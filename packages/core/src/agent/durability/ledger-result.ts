import type { JsonValue } from '../../errors/keel-error.js';
import type { ToolResult } from '../../spec/tool.js';
import type { ToolStop } from '../run/directives.js';
import type { PendingToolCall } from '../run/run-state.js';

/** A completed call as the ledger holds it: its result, and the stop the tool asked for, if it did. */
export interface LedgerResult {
  readonly result: ToolResult;
  readonly stop?: ToolStop;
}

/** What the ledger records for a completed call (undefined while it has no result). */
export function ledgerResultOf(call: PendingToolCall): JsonValue | undefined {
  if (call.result === undefined) return undefined;
  const result = call.result as unknown as Record<string, JsonValue>;
  return call.stop === undefined ? result : { ...result, stop: call.stop as unknown as JsonValue };
}

/** A completed call's ledger result, split into the tool result and the stop it carries. */
export function readLedgerResult(value: JsonValue): LedgerResult {
  const { stop, ...result } = value as unknown as Record<string, unknown>;
  const candidate = stop as { reason?: unknown; output?: JsonValue } | undefined;
  if (typeof candidate?.reason !== 'string') return { result: result as unknown as ToolResult };
  return {
    result: result as unknown as ToolResult,
    stop:
      candidate.output === undefined
        ? { reason: candidate.reason }
        : { reason: candidate.reason, output: candidate.output },
  };
}
