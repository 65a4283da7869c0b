import { describe, expect, it } from 'vitest';
import { agent } from '../agent/agent.js';
import { KeelError } from '../errors/keel-error.js';
import { constant } from '../policies/delays.js';
import type { ModelRequest } from '../spec/model.js';
import { scriptedModel } from '../testing/scripted-model.js';
import type { BudgetOptions } from './budget-options.js';
import { type BudgetStore, memoryBudgetStore } from './budget-store.js';
import { estimatePromptTokens } from './prompt-estimate.js';

/** A promise with its resolver, for holding a model call open. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

const PROMPT = 'What is the weather in Paris?';
const promptTokens = estimatePromptTokens([{ role: 'user', content: PROMPT }], undefined);

describe('budgets that hold', () => {
  it('two concurrent runs against one remaining budget: exactly one call is sent', async () => {
    const held = deferred();
    const sent: ModelRequest[] = [];
    const model = scriptedModel(
      async (request) => {
        sent.push(request);
        await held.promise;
        return { content: 'sunny', usage: { inputTokens: promptTokens, outputTokens: 100 } };
      },
      { provider: 'openai', model: 'gpt-4.1-mini' },
    );
    // Room for one call's worst case (prompt + 500 output tokens), not two.
    const budgets: BudgetOptions = {
      limits: [{ name: 'shared', scope: 'global', maxTokens: promptTokens + 500 + 200 }],
      minOutputTokens: 256,
    };
    const assistant = agent({ model, maxOutputTokens: 500, budgets });
    const first = assistant.run(PROMPT);
    const second = assistant.run(PROMPT);
    // Both reservations are decided before either call returns.
    await new Promise((done) => setImmediate(done));
    held.resolve();
    const results = await Promise.all([first, second]);
    expect(sent).toHaveLength(1);
    const statuses = results.map((result) => result.stopReason).sort();
    expect(statuses).toEqual(['budget_exhausted', 'final_answer']);
    const refused = results.find((result) => result.status === 'failed')!;
    expect(refused.error?.code).toBe('policy.budget_exhausted');
    expect(refused.error?.data).toMatchObject({ budget: 'shared', scope: 'global', unit: 'tokens' });
    expect(refused.report.requests.total).toBe(0);
  });

  it('settles the actual spend: what a call did not use is free for the next', async () => {
    const model = scriptedModel(() => ({ content: 'ok', usage: { inputTokens: 10, outputTokens: 10 } }));
    const store = memoryBudgetStore();
    const assistant = agent({
      model,
      maxOutputTokens: 1_000,
      budgets: {
        limits: [{ name: 'day', scope: 'tenant', maxTokens: 1_000 + promptTokens + 40, period: 'day' }],
        store,
      },
    });
    for (let index = 0; index < 2; index++) {
      const result = await assistant.run(PROMPT, { tenant: 'acme' });
      expect(result.status).toBe('completed');
    }
    const day = Math.floor(Date.now() / 86_400_000);
    expect(await store.read([`day:tenant:acme:${day}:tokens`])).toEqual([40]);
  });

  it('shrinks maxOutputTokens to fit what is left (rule 2), then ends the run naming the budget (rule 3)', async () => {
    const model = scriptedModel(() => ({
      content: 'ok',
      usage: { inputTokens: promptTokens, outputTokens: 400 },
    }));
    const assistant = agent({
      model,
      maxOutputTokens: 1_000,
      budgets: { limits: [{ name: 'per-run', scope: 'run', maxTokens: 2 * promptTokens + 1_000 }] },
    });
    const first = await assistant.run(PROMPT);
    expect(first.status).toBe('completed');
    expect(model.calls[0]?.maxOutputTokens).toBe(1_000);
    const tight = agent({
      model,
      maxOutputTokens: 1_000,
      budgets: { limits: [{ name: 'tight', scope: 'tenant', maxTokens: promptTokens + 300 }] },
    });
    const shrunk = await tight.run(PROMPT, { tenant: 'small' });
    expect(shrunk.status).toBe('completed');
    expect(model.calls[1]?.maxOutputTokens).toBe(300);
    const none = await tight.run(PROMPT, { tenant: 'small' });
    expect(none.stopReason).toBe('budget_exhausted');
    expect(none.error?.message).toMatch(/Budget "tight" \(tenant small\)/);
    expect(model.calls).toHaveLength(2);
  });

  it('sends a call a cost budget refused to the cheapest fallback that fits, before shrinking it (rule 1)', async () => {
    const reply = () => ({ content: 'ok', usage: { inputTokens: promptTokens, outputTokens: 100 } });
    const big = scriptedModel(reply, { provider: 'openai', model: 'big' });
    const mid = scriptedModel(reply, { provider: 'openai', model: 'mid' });
    const small = scriptedModel(reply, { provider: 'openai', model: 'small' });
    const prices = {
      big: { inputUsdPerMillion: 10, outputUsdPerMillion: 40 },
      mid: { inputUsdPerMillion: 5, outputUsdPerMillion: 20 },
      small: { inputUsdPerMillion: 1, outputUsdPerMillion: 4 },
    };
    // 1_000 output tokens: 0.04 dollars on big (refused), 0.02 on mid, 0.004 on small; big would fit ~600 (rule 2).
    const limits = [{ name: 'cents', scope: 'tenant' as const, maxCostUsd: 0.025 }];
    const cheap = agent({
      model: big,
      fallbacks: [mid, small],
      prices,
      maxOutputTokens: 1_000,
      budgets: { limits },
    });
    const events: string[] = [];
    cheap.onEvent((event) => {
      if (event.type === 'fallback-used') events.push(`${event.from}>${event.to}:${event.errorCode}`);
    });
    const result = await cheap.run(PROMPT, { tenant: 'acme' });
    expect(result.status).toBe('completed');
    expect(big.calls).toHaveLength(0);
    expect(mid.calls).toHaveLength(0);
    expect(small.calls.map((call) => call.maxOutputTokens)).toEqual([1_000]);
    expect(result.report.fallbacks.used).toMatchObject([
      { from: 'openai/big', to: 'openai/small', errorCode: 'policy.budget_exhausted' },
    ]);
    expect(events).toEqual(['openai/big>openai/small:policy.budget_exhausted']);
    // Opted out: the call stays on its model with a smaller output limit.
    const kept = agent({
      model: big,
      fallbacks: [mid, small],
      prices,
      maxOutputTokens: 1_000,
      budgets: { limits, cheaperFallbacks: false },
    });
    const shrunk = await kept.run(PROMPT, { tenant: 'acme' });
    expect(shrunk.status).toBe('completed');
    expect(big.calls).toHaveLength(1);
    expect(big.calls[0]!.maxOutputTokens).toBeLessThan(1_000);
    expect(shrunk.report.fallbacks.used).toEqual([]);
  });

  it("bounds a run's tokens across its steps, before the call rather than after", async () => {
    let calls = 0;
    const model = scriptedModel(() => {
      calls++;
      return calls === 1
        ? { toolCalls: [{ name: 'missing' }], usage: { inputTokens: 50, outputTokens: 900 } }
        : { content: 'done' };
    });
    const result = await agent({
      model,
      maxOutputTokens: 500,
      budgets: { limits: [{ name: 'run-cap', scope: 'run', maxTokens: 1_200 }], minOutputTokens: 400 },
    }).run('go');
    expect(result.stopReason).toBe('budget_exhausted');
    expect(calls).toBe(1);
  });

  it('reserves cost at the model price, and tenants spend apart', async () => {
    const model = scriptedModel(
      () => ({ content: 'ok', usage: { inputTokens: 1_000, outputTokens: 1_000 } }),
      {
        provider: 'openai',
        model: 'gpt-4.1',
      },
    );
    const assistant = agent({
      model,
      maxOutputTokens: 1_000,
      // gpt-4.1: 2 and 8 dollars per million: a call's worst case is under 0.011 dollars, its actual 0.01.
      budgets: { limits: [{ name: 'cents', scope: 'tenant', maxCostUsd: 0.015 }], minOutputTokens: 1_000 },
    });
    expect((await assistant.run('a', { tenant: 'one' })).status).toBe('completed');
    expect((await assistant.run('a', { tenant: 'two' })).status).toBe('completed');
    const again = await assistant.run('a', { tenant: 'one' });
    expect(again.stopReason).toBe('budget_exhausted');
    expect(again.error?.data).toMatchObject({ budget: 'cents', unit: 'usd', scopeId: 'one' });
  });

  it('fails closed when the store cannot answer: no call is sent; calls resume when it answers again', async () => {
    let down = true;
    const inner = memoryBudgetStore();
    const store: BudgetStore = {
      reserve: (counters) => {
        if (down) throw new KeelError('store.unavailable', 'Redis is down');
        return inner.reserve(counters);
      },
      settle: (adjustments) => inner.settle(adjustments),
      read: (keys) => inner.read(keys),
    };
    const model = scriptedModel(() => ({ content: 'ok' }));
    const assistant = agent({
      model,
      retry: { delay: constant(0), maxAttempts: 2 },
      budgets: { limits: [{ name: 'all', scope: 'global', maxTokens: 100_000 }], store },
    });
    const refused = await assistant.run('hi');
    expect(refused.status).toBe('failed');
    expect(refused.error?.code).toBe('store.unavailable');
    expect(model.calls).toHaveLength(0);
    down = false;
    expect((await assistant.run('hi')).status).toBe('completed');
    expect(model.calls).toHaveLength(1);
    down = true;
    const open = agent({
      model,
      budgets: {
        limits: [{ name: 'all', scope: 'global', maxTokens: 100_000 }],
        store,
        onStoreUnavailable: 'open',
      },
    });
    expect((await open.run('hi')).status).toBe('completed');
  });

  it('refuses bad budgets with config.invalid saying what to write', async () => {
    const model = scriptedModel([]);
    expect(() => agent({ model, budgets: { limits: [] } })).toThrow(
      /budgets.limits must be a non-empty array/,
    );
    expect(() =>
      agent({ model, budgets: { limits: [{ name: 'x', scope: 'run', maxTokens: 5, period: 'day' }] } }),
    ).toThrow(/period is not allowed for scope run/);
    expect(() => agent({ model, budgets: { limits: [{ name: 'x', scope: 'tenant' }] } })).toThrow(
      /must set maxTokens, maxCostUsd or both/,
    );
    await expect(agent({ model }).run('x', { tenant: 'a b' })).rejects.toThrow(/tenant must be 1 to 64/);
  });
});
