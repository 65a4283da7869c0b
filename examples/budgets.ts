// Cost and budgets: every model call priced (here by a price of our own for the simulated model), the run's cost in
// its report, and budgets held before each call: a budget too small for the next call ends the run
// `budget_exhausted` without sending it; and a limit on how many runs of one tenant run at once. Offline, on the
// simulated provider:
//   npm run build && node examples/dist/budgets.js
import { fileURLToPath } from 'node:url';
import { agent, type RunReport, type RunStatus } from '@keel/core';
import { simulated } from '@keel/simulated';

/** Runs an agent within its budgets, then one whose run budget cannot hold a single call. */
export async function main(): Promise<{
  status: RunStatus;
  cost: RunReport['cost'];
  refused: { status: RunStatus; stopReason: string | undefined; code: string | undefined; budget: unknown };
  tenantRun: RunStatus;
}> {
  const model = simulated({ faults: 'none' });
  // The built-in price table covers OpenAI's and Anthropic's models; the simulated one is priced here.
  const prices = { 'sim-primary': { inputUsdPerMillion: 0.4, outputUsdPerMillion: 1.6 } };

  // #region budgets
  const assistant = agent({
    model,
    prices,
    maxOutputTokens: 1_024,
    budgets: {
      limits: [
        { name: 'per-run', scope: 'run', maxTokens: 50_000 },
        { name: 'daily', scope: 'tenant', maxCostUsd: 5, period: 'day' },
      ],
      // store: shared.budgetStore(), // @keel/redis: one set of counters for the fleet; defaults to the agent's memory
    },
  });
  const result = await assistant.run('Summarise the report', { tenant: 'acme' });
  result.report.cost; // { totalUsd, byModel, unpricedCalls }
  // #endregion

  // A run budget smaller than the prompt plus the least output a call may ask for (256 tokens): no call is sent.
  const frugal = agent({
    model,
    prices,
    budgets: { limits: [{ name: 'tiny', scope: 'run', maxTokens: 100 }] },
  });
  const refused = await frugal.run('Summarise the report', { tenant: 'acme' });

  // #region tenants
  const desk = agent({
    model,
    tenants: { maxConcurrentRuns: 2, perTenant: { acme: 10 }, maxWaitMs: 30_000 },
  });
  const tenantRun = await desk.run('Summarise the report', { tenant: 'acme' });
  // #endregion
  await model.close();
  return {
    status: result.status,
    cost: result.report.cost,
    refused: {
      status: refused.status,
      stopReason: refused.stopReason,
      code: refused.error?.code,
      budget: (refused.error?.data as { budget?: unknown } | undefined)?.budget,
    },
    tenantRun: tenantRun.status,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(JSON.stringify(await main(), null, 2));
