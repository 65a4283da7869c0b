import { KeelError, type RunStatus, type RunStore, type RunSummary, sessionCost } from '@keel/core';
import { type Output, paint } from '../../output/output.js';
import { formatUsd, isWaiting, waitingLines } from '../../output/render.js';
import { type ShownRun, shownRunOf } from './run-shown.js';

const STATUSES: readonly RunStatus[] = [
  'queued',
  'running',
  'completed',
  'failed',
  'interrupted',
  'cancelled',
];

/** `keel runs list [--status S] [--limit N] [--json]`: the newest runs first. */
export async function listRuns(
  store: RunStore,
  options: { status?: string; limit?: number; json: boolean },
  output: Output,
): Promise<number> {
  if (options.status !== undefined && !STATUSES.includes(options.status as RunStatus)) {
    throw new KeelError(
      'config.invalid',
      `--status must be one of ${STATUSES.join(', ')}, not ${options.status}`,
    );
  }
  const filter: { status?: RunStatus; limit?: number } = { limit: options.limit ?? 20 };
  if (options.status !== undefined) filter.status = options.status as RunStatus;
  const runs = await store.listRuns(filter);
  if (options.json) {
    output.out(JSON.stringify(runs, null, 2));
    return 0;
  }
  if (runs.length === 0) {
    output.out('No runs yet. Start one with: keel run <agent.yaml> "<task>"');
    return 0;
  }
  output.out(
    paint(
      output,
      'bold',
      `${'RUN ID'.padEnd(37)} ${'STATUS'.padEnd(12)} ${'AGENT'.padEnd(20)} ${'UPDATED'.padEnd(25)} WORKER`,
    ),
  );
  const nowMs = Date.now();
  for (const run of runs) {
    output.out(
      `${run.runId.padEnd(37)} ${run.status.padEnd(12)} ${run.agentName.padEnd(20)} ` +
        `${new Date(run.updatedAtMs).toISOString().padEnd(25)} ${workerOf(run, nowMs)}`,
    );
  }
  return 0;
}

/**
 * Who holds a queued or running run: the lease owner (the worker's host, pid and a random part), marked when its lease
 * has run out (its worker died, or paused it: another takes it); `-` for a run nobody holds.
 */
function workerOf(run: RunSummary, nowMs: number): string {
  if (run.lease === undefined || (run.status !== 'running' && run.status !== 'queued')) return '-';
  return run.lease.expiresAtMs > nowMs ? run.lease.owner : `${run.lease.owner} (lease ended)`;
}

/**
 * `keel runs show <id> [--json]`: a run's task, how it stopped (stop reason, error code, message and guidance), what
 * it waits for and the command that answers it, its output, then its stored record and tool ledger. The JSON holds
 * the same: `{ task, stopReason, stopDetail, error, output, pending, run, ledger }`; a run on a session has
 * `session`: `{ sessionId, totalUsd, runs }`, what the session's runs cost so far (see `keel sessions show`).
 */
export async function showRun(
  store: RunStore,
  runId: string,
  options: { json: boolean },
  output: Output,
): Promise<number> {
  const run = await store.loadRun(runId);
  if (run === undefined) {
    throw new KeelError('store.not_found', `No run ${runId} in this store (list them with: keel runs list)`, {
      data: { runId },
    });
  }
  const ledger = await store.ledger(runId);
  const shown = shownRunOf(run);
  for (const child of shown.children) {
    const record = await store.loadRun(child.runId);
    if (record !== undefined) child.status = record.status;
  }
  const session = await sessionTotalOf(store, run.state);
  if (options.json) {
    output.out(
      JSON.stringify(
        {
          task: shown.task ?? null,
          stopReason: shown.stopReason ?? null,
          ...(shown.stopDetail === undefined ? {} : { stopDetail: shown.stopDetail }),
          error: shown.error ?? null,
          output: shown.output ?? null,
          pending: shown.pending,
          ...(shown.tenant === undefined ? {} : { tenant: shown.tenant }),
          cost: shown.cost ?? null,
          ...(session === undefined ? {} : { session }),
          parentRunId: shown.parentRunId ?? null,
          children: shown.children,
          run,
          ledger,
        },
        null,
        2,
      ),
    );
    return 0;
  }
  output.out(`${paint(output, 'bold', 'run')}      ${run.runId}`);
  output.out(`agent    ${run.agentName}`);
  const stopped =
    shown.stopReason === undefined
      ? ''
      : `   stop reason ${shown.stopReason}${shown.stopDetail === undefined ? '' : ` (${shown.stopDetail})`}`;
  output.out(
    `status   ${run.status}${stopped}   (version ${run.version}, state schema ${run.schemaVersion})`,
  );
  if (run.status === 'queued' || run.status === 'running')
    output.out(`worker   ${workerOf(run, Date.now())}`);
  output.out(
    `created  ${new Date(run.createdAtMs).toISOString()}   updated ${new Date(run.updatedAtMs).toISOString()}`,
  );
  if (shown.task !== undefined) output.out(`task     ${shown.task}`);
  if (shown.tenant !== undefined) output.out(`tenant   ${shown.tenant}`);
  if (shown.usage !== undefined || shown.cost !== undefined) output.out(costLine(shown));
  if (session !== undefined) {
    const runs = `${session.runs} run${session.runs === 1 ? '' : 's'}`;
    output.out(
      `session  ${session.sessionId} · cost ${formatUsd(session.totalUsd)} over ${runs} (keel sessions show ${session.sessionId})`,
    );
  }
  if (shown.parentRunId !== undefined) output.out(`parent   ${shown.parentRunId}`);
  if (isWaiting({ status: run.status, error: shown.error })) {
    for (const line of waitingLines(run.runId, shown.pending, shown.error?.message, output)) output.out(line);
  } else if (shown.error !== undefined) {
    output.out(
      `error    ${paint(output, 'red', shown.error.code ?? shown.error.name)}: ${shown.error.message}`,
    );
    if (shown.error.guidance !== undefined) output.out(`guidance ${shown.error.guidance}`);
  }
  if (shown.output !== undefined) {
    output.out(paint(output, 'bold', 'output'));
    output.out(typeof shown.output === 'string' ? shown.output : JSON.stringify(shown.output, null, 2));
  }
  if (shown.children.length > 0) {
    output.out(paint(output, 'bold', `child runs (${shown.children.length})`));
    for (const child of shown.children)
      output.out(
        `  ${child.kind.padEnd(8)} ${child.agentName.padEnd(16)} ${child.status.padEnd(11)} ${child.runId}`,
      );
  }
  output.out(paint(output, 'bold', `tool ledger (${ledger.length})`));
  for (const entry of ledger) {
    output.out(
      `  step ${entry.step} call ${entry.callIndex}  ${entry.toolName.padEnd(20)} ${entry.status}  ${entry.idempotencyKey}`,
    );
  }
  return 0;
}

/**
 * The session a run is on, with what the session's runs cost so far (see `sessionCost`): undefined for a run on no
 * session, or on one the store no longer has.
 */
async function sessionTotalOf(
  store: RunStore,
  state: unknown,
): Promise<{ sessionId: string; totalUsd: number; runs: number } | undefined> {
  const sessionId = (state as { session?: { sessionId?: unknown } } | null)?.session?.sessionId;
  if (typeof sessionId !== 'string') return undefined;
  const session = await store.loadSession(sessionId);
  if (session === undefined) return undefined;
  const cost = await sessionCost(store, session);
  return { sessionId, totalUsd: cost.totalUsd, runs: cost.runs.length };
}

/** Tokens and cost: `cost     $0.000420 (openai/gpt-4.1-mini $0.000420) · tokens in 900 out 40`. */
function costLine(shown: ShownRun): string {
  const cost = shown.cost;
  const models = Object.entries(cost?.byModel ?? {}).map(([model, usd]) => `${model} ${formatUsd(usd)}`);
  const priced =
    cost === undefined
      ? 'unknown'
      : `${formatUsd(cost.totalUsd)}${models.length > 0 ? ` (${models.join(', ')})` : ''}`;
  const unpriced =
    cost !== undefined && cost.unpricedCalls > 0
      ? ` · ${cost.unpricedCalls} calls of models without a price`
      : '';
  const tokens =
    shown.usage === undefined
      ? ''
      : ` · tokens in ${shown.usage.inputTokens} out ${shown.usage.outputTokens}`;
  return `cost     ${priced}${unpriced}${tokens}`;
}
