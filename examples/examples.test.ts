// Every TypeScript example runs offline on the simulated provider (the fleet on the private PostgreSQL and Redis
// the test setup starts), and shows what its comments say. An example file without a case here fails the suite.
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const folder = fileURLToPath(new URL('.', import.meta.url));

const cases: Record<string, () => Promise<void>> = {
  'first-agent.ts': async () => {
    const { main } = await import('./first-agent.js');
    const previous = process.cwd();
    process.chdir(mkdtempSync(join(tmpdir(), 'keel-example-'))); // its store: .keel/keel.db here
    const result = await main().finally(() => process.chdir(previous));
    expect(result.status).toBe('completed');
    expect(result.report.retries.model).toBeGreaterThan(0);
    expect(result.report.fallbacks.total).toBe(1);
    expect(result.report.corrections.total).toBe(1);
    expect(result.session).toEqual({ sessionId: 'user-42', outcome: 'saved', version: 2 });
  },
  'hosted-models.ts': async () => {
    const { hostedModels } = await import('./hosted-models.js');
    const previous = { openai: process.env.OPENAI_API_KEY, anthropic: process.env.ANTHROPIC_API_KEY };
    process.env.OPENAI_API_KEY = 'placeholder-openai-key';
    process.env.ANTHROPIC_API_KEY = 'placeholder-anthropic-key';
    try {
      const { model, fallbackModel } = hostedModels();
      expect([model.provider, model.model]).toEqual(['openai', 'gpt-4.1-mini']);
      expect([fallbackModel.provider, fallbackModel.model]).toEqual(['anthropic', 'claude-haiku-4-5']);
    } finally {
      for (const [name, value] of [
        ['OPENAI_API_KEY', previous.openai],
        ['ANTHROPIC_API_KEY', previous.anthropic],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  },
  'durable-approval.ts': async () => {
    const { main } = await import('./durable-approval.js');
    expect(await main()).toEqual({
      first: 'interrupted',
      stopReason: 'approval_required',
      waiting: 'create_ticket',
      answered: 'completed',
      opened: 1,
    });
  },
  'fallback-chain.ts': async () => {
    const { main } = await import('./fallback-chain.js');
    const result = await main();
    expect(result.status).toBe('completed');
    expect(result.fallbacks).toEqual(['simulated/sim-second', 'simulated/sim-third']);
    expect(result.requests.byModel).toEqual({
      'simulated/sim-primary': 2,
      'simulated/sim-second': 2,
      'simulated/sim-third': 1,
    });
  },
  'tool-errors.ts': async () => {
    const { main } = await import('./tool-errors.js');
    expect(await main()).toEqual({
      calls: 1,
      plain: { 'tool.failed': 1 },
      toolRetries: 0,
      degradations: { total: 1, byTool: { get_weather: 1 } },
    });
  },
  'guardrails-and-output.ts': async () => {
    const { main } = await import('./guardrails-and-output.js');
    const result = await main();
    expect(result.refused).toBe('guardrail.input');
    expect(result.status).toBe('completed');
    expect(result.output).toMatchObject({ city: 'Paris', summary: expect.any(String) });
  },
  'mcp-agent.ts': async () => {
    const { main } = await import('./mcp-agent.js');
    const result = await main();
    expect(result.status).toBe('completed');
    expect(result.byTool).toEqual({ everything_echo: 1 });
  },
  'ai-sdk-model.ts': async () => {
    const { main } = await import('./ai-sdk-model.js');
    expect(await main()).toEqual({ status: 'completed', retries: 1, requests: 2 });
  },
  'stream-to-web-page.ts': async () => {
    const { main } = await import('./stream-to-web-page.js');
    const result = await main();
    expect(result.status).toBe('completed');
    expect(result.byTool).toEqual({ get_weather: 1 });
    expect(result.output).toContain('Paris');
    expect(result.streamed).toBe(result.output); // the text-delta parts of the last step spell the answer
    expect(result.page).toBe(true);
    expect(result.webText).toBe(result.output); // read back by the AI SDK's own client
    expect(result.webFinished).toBe(true);
  },
  'budgets.ts': async () => {
    const { main } = await import('./budgets.js');
    const result = await main();
    expect(result.status).toBe('completed');
    expect(result.cost?.totalUsd).toBeGreaterThan(0);
    expect(result.cost?.byModel['simulated/sim-primary']).toBe(result.cost?.totalUsd);
    expect(result.cost?.unpricedCalls).toBe(0);
    expect(result.refused).toEqual({
      status: 'failed',
      stopReason: 'budget_exhausted',
      code: 'policy.budget_exhausted',
      budget: 'tiny',
    });
    expect(result.tenantRun).toBe('completed');
  },
  'compose-agents.ts': async () => {
    const { main } = await import('./compose-agents.js');
    expect(await main()).toEqual({
      status: 'completed',
      stopDetail: 'handoff to support',
      children: [
        { agentName: 'research', kind: 'tool', status: 'completed', linked: true },
        { agentName: 'support', kind: 'handoff', status: 'completed', linked: true },
      ],
      answeredBy: 'support',
      tickets: 1,
    });
  },
  'fleet-worker.ts': async () => {
    const postgres = process.env.KEEL_TEST_POSTGRES_URL;
    const redis = process.env.KEEL_TEST_REDIS_URL;
    if (postgres === undefined || redis === undefined) {
      throw new Error(
        'KEEL_TEST_POSTGRES_URL and KEEL_TEST_REDIS_URL are not set: the vitest global setup starts them',
      );
    }
    const { main } = await import('./fleet-worker.js');
    expect(await main(postgres, redis)).toEqual({ status: 'completed', stored: 'completed' });
  },
};

describe('examples/*.ts', () => {
  it('has a case for every example file', () => {
    const files = readdirSync(folder).filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'));
    expect(files.sort()).toEqual(Object.keys(cases).sort());
  });

  for (const [file, check] of Object.entries(cases)) {
    it(`${file} runs offline`, { timeout: 120_000 }, check);
  }
});
