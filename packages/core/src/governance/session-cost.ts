import { throwOptionError } from '../options/option-error.js';
import type { RunStore, SessionRecord } from '../spec/run-store.js';
import type { RunCost } from './run-cost.js';

/** How many run records `sessionCost` loads at once. */
const LOADS_AT_ONCE = 8;

/** What the runs of one session cost: their reports' `cost`, added up (see {@link sessionCost}). */
export interface SessionCost {
  readonly sessionId: string;
  /** US dollars over the session's runs. */
  readonly totalUsd: number;
  /** US dollars by `provider/model`, over the session's runs. */
  readonly byModel: Readonly<Record<string, number>>;
  /** Answered calls of models without a price, over the session's runs: they count 0 above. */
  readonly unpricedCalls: number;
  /** Each run counted, in the order of the session's turns (the run holding the session last), with its cost. */
  readonly runs: readonly { readonly runId: string; readonly totalUsd: number }[];
}

/**
 * The cost of a session's runs, read from the store when asked (a run's report holds only its own cost; a session's
 * total would be stale in it as soon as the next run spent): the runs that appended the session's turns, and the run
 * holding it now. A run on the session that ended without appending a turn (failed, cancelled) is not found by it:
 * the store does not list runs by session. A run the store no longer has, or one queued, counts 0.
 *
 * @example
 *   const cost = await sessionCost(store, 'support-42'); // { totalUsd, byModel, unpricedCalls, runs }
 */
export async function sessionCost(
  store: Pick<RunStore, 'loadRun'>,
  session: Pick<SessionRecord, 'sessionId' | 'turns' | 'activeRunId'>,
): Promise<SessionCost> {
  if (typeof store?.loadRun !== 'function') {
    throwOptionError({
      where: 'sessionCost',
      option: 'store',
      message: 'store must be a run store (with loadRun)',
    });
  }
  if (typeof session !== 'object' || session === null || !Array.isArray(session.turns)) {
    throwOptionError({
      where: 'sessionCost',
      option: 'session',
      message: 'session must be a session record, as store.loadSession(sessionId) returns it',
    });
  }
  const runIds = [...new Set([...session.turns.map((turn) => turn.runId), session.activeRunId])].filter(
    (runId): runId is string => runId !== undefined,
  );
  // A few runs at a time: a long session must not take every connection of the store's pool at once.
  const records: Awaited<ReturnType<RunStore['loadRun']>>[] = [];
  for (let start = 0; start < runIds.length; start += LOADS_AT_ONCE) {
    const batch = runIds.slice(start, start + LOADS_AT_ONCE);
    records.push(...(await Promise.all(batch.map((runId) => store.loadRun(runId)))));
  }
  const byModel: Record<string, number> = {};
  let totalUsd = 0;
  let unpricedCalls = 0;
  const runs = runIds.map((runId, index) => {
    const cost = costOf(records[index]?.state);
    if (cost === undefined) return { runId, totalUsd: 0 };
    totalUsd += cost.totalUsd;
    unpricedCalls += cost.unpricedCalls;
    for (const [model, usd] of Object.entries(cost.byModel)) byModel[model] = (byModel[model] ?? 0) + usd;
    return { runId, totalUsd: cost.totalUsd };
  });
  return { sessionId: session.sessionId, totalUsd, byModel, unpricedCalls, runs };
}

/** A stored state's `report.cost`, if it has a well-formed one. */
function costOf(state: unknown): RunCost | undefined {
  const cost = (state as { report?: { cost?: Partial<RunCost> } } | null | undefined)?.report?.cost;
  if (typeof cost?.totalUsd !== 'number' || typeof cost.byModel !== 'object' || cost.byModel === null)
    return undefined;
  const byModel: Record<string, number> = {};
  for (const [model, usd] of Object.entries(cost.byModel)) if (typeof usd === 'number') byModel[model] = usd;
  return {
    totalUsd: cost.totalUsd,
    byModel,
    unpricedCalls: typeof cost.unpricedCalls === 'number' ? cost.unpricedCalls : 0,
  };
}
