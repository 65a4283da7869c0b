import { dirname, join } from 'node:path';
import type { AgentFile } from '@keel/agent-file';
import type { ChaosEnvironment } from '@keel/chaos';
import { builtinTools } from '@keel/cli';
import type { Tool, ToolContext } from '@keel/core';

/**
 * The agent file's tools for a peer: the very tools keel runs (the CLI's built-ins, instrumented with the scenario's
 * faults and effect ledger), so every subject has the same tool semantics; each peer only adapts them to its SDK.
 */
export function peerTools(file: AgentFile, environment: ChaosEnvironment): Tool[] {
  const available = builtinTools({
    filesDirectory: dirname(file.path),
    outboxPath: join(environment.directory, 'outbox.jsonl'),
  });
  // Built-in tools only: the tools an agent file declares (MCP servers, commands, HTTP) are keel's own adapters.
  const builtins = file.tools.flatMap((entry) =>
    entry.kind === 'builtin' ? [available.get(entry.name)!] : [],
  );
  return environment.instrumentTools(builtins);
}

/**
 * What a keel tool is handed when a peer calls it: the run's id, the model's call id as the idempotency key (the
 * peers have nothing steadier), and the peer's abort signal when it passes one.
 */
export function toolContext(runId: string, callId: string, signal: AbortSignal | undefined): ToolContext {
  return {
    signal: signal ?? new AbortController().signal,
    idempotencyKey: `${runId}:${callId}`,
    runId,
    step: 0,
    callIndex: 0,
    attempt: 1,
  };
}
