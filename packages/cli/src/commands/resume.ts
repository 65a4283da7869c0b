import { type ApprovalAnswer, KeelError, type RunStore, type ToolCallDecision } from '@keel/core';
import { buildAgent } from '../build-agent.js';
import { loadInvocation } from '../invocation.js';
import { type Output, paint } from '../output.js';
import { liveEvents, presentResult } from '../render.js';

/** What `keel resume` is given. */
export interface ResumeCommandOptions {
  runId: string;
  /** The agent file, when this directory has no record of how the run was started. */
  agentFile?: string;
  /** Idempotency keys of calls to approve. */
  approve: string[];
  /** `KEY` or `KEY=reason`: calls to reject, with the reason the model will see. */
  reject: string[];
  /** Idempotency keys of calls that may have run, to run again. */
  execute: string[];
  /** Idempotency keys of calls that may have run, to give up on (the model is told the outcome is unknown). */
  abandon: string[];
  json: boolean;
  workingDirectory: string;
  environment: NodeJS.ProcessEnv;
  signal: AbortSignal;
}

/** `keel resume <run-id>`: continues a run from its last checkpoint, with the decisions it waits for. */
export async function resumeCommand(
  options: ResumeCommandOptions,
  store: RunStore,
  output: Output,
): Promise<number> {
  const invocation = await loadInvocation(options.workingDirectory, options.runId, options.agentFile);
  const approvals: Record<string, ApprovalAnswer> = {};
  for (const key of options.approve) approvals[key] = { approved: true };
  for (const entry of options.reject) {
    const separator = entry.indexOf('=');
    const key = separator === -1 ? entry : entry.slice(0, separator);
    const reason = separator === -1 ? undefined : entry.slice(separator + 1);
    if (key in approvals) throw new KeelError('config.invalid', `Call ${key} is both approved and rejected`);
    approvals[key] = reason === undefined ? { approved: false } : { approved: false, reason };
  }
  const decisions: Record<string, ToolCallDecision> = {};
  for (const key of options.execute) decisions[key] = 'execute';
  for (const key of options.abandon) {
    if (key in decisions) throw new KeelError('config.invalid', `Call ${key} is both executed and abandoned`);
    decisions[key] = 'abandon';
  }
  const built = await buildAgent({
    agentFile: invocation.agentFile,
    workingDirectory: options.workingDirectory,
    environment: options.environment,
    store,
    ...(invocation.faults === undefined ? {} : { faults: invocation.faults }),
    ...(invocation.seed === undefined ? {} : { seed: invocation.seed }),
  });
  try {
    if (!options.json) {
      output.out(`${paint(output, 'bold', `keel resume ${built.file.name}`)}  run ${options.runId}`);
      output.out('');
    }
    const result = await built.agent.resume(options.runId, {
      approvals,
      decisions,
      signal: options.signal,
      ...liveEvents(options.json, output),
    });
    return presentResult(result, options.json, output);
  } finally {
    await built.models.close();
  }
}
