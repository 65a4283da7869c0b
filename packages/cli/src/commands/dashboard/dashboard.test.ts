// keel dashboard over runs made by the CLI itself (keel run, in process, on the simulated provider with faults),
// driven in headless Chromium: the list, a timeline with its retry and fallback, and an approval that resumes the
// run exactly as keel resume does.
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invocationPath } from '../../build/invocation.js';
import { main } from '../../main.js';
import type { Output } from '../../output/output.js';
import { dashboardCommand } from './dashboard.js';

const directory = mkdtempSync(join(tmpdir(), 'keel-dashboard-'));
const environment = { NO_COLOR: '1' };

writeFileSync(
  join(directory, 'weather.yaml'),
  [
    'name: weather',
    'model: { provider: simulated, name: sim-primary, faults: "sequence=rate_limit>overloaded,retry_after_ms=0" }',
    'fallbacks: [simulated:sim-fallback]',
    'tools: [get_weather]',
    'retry: { maxAttempts: 2 }',
  ].join('\n'),
);
writeFileSync(
  join(directory, 'local-llm.yaml'),
  [
    'name: local-llm',
    'model: { provider: openai, name: local-model, baseUrl: "http://127.0.0.1:4999/v1", apiKeyEnv: LOCAL_LLM_API_KEY }',
  ].join('\n'),
);
writeFileSync(
  join(directory, 'support.yaml'),
  [
    'name: support',
    'model: simulated:sim-primary',
    'tools: [create_ticket]',
    'retry: { maxAttempts: 1 }',
  ].join('\n'),
);

/** Runs the CLI in process; returns its exit code and what it printed. */
async function keel(...argv: string[]): Promise<{ code: number; stdout: string }> {
  const lines: string[] = [];
  const output: Output = {
    out: (line) => lines.push(line),
    error: (line) => lines.push(line),
    colour: false,
  };
  const code = await main(argv, environment, output, directory);
  return { code, stdout: lines.join('\n') };
}

/** An urgent ticket run, interrupted for approval: its id and the call's key. */
async function urgentTicket(task: string): Promise<{ runId: string; key: string }> {
  const { code, stdout } = await keel('run', 'support.yaml', task, '--json');
  expect(code).toBe(3);
  const result = JSON.parse(stdout);
  return { runId: result.runId, key: result.pending[0].idempotencyKey };
}

/** Starts `keel dashboard` in process; resolves with its page URL once it listens. */
async function startCommand(argv: string[] = [], extraEnvironment: Record<string, string> = {}) {
  const controller = new AbortController();
  const lines: string[] = [];
  let listening!: (url: string) => void;
  const url = new Promise<string>((resolve) => {
    listening = resolve;
  });
  const output: Output = {
    out: (line) => {
      lines.push(line);
      const match = /^keel dashboard {2}(\S+)/.exec(line);
      if (match) listening(match[1]!);
      else if (line.startsWith('{')) listening((JSON.parse(line) as { url: string }).url);
    },
    error: (line) => lines.push(line),
    colour: false,
  };
  const exited = dashboardCommand(['--port', '0', ...argv], {
    environment: { ...environment, ...extraEnvironment },
    output,
    workingDirectory: directory,
    signal: controller.signal,
  });
  return {
    url: await Promise.race([url, exited.then(() => Promise.reject(new Error(lines.join('\n'))))]),
    exited,
    stop: () => controller.abort(),
    lines,
  };
}

function tickets(key: string): unknown[] {
  return readFileSync(join(directory, '.keel', 'outbox.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
    .filter((ticket) => ticket.idempotencyKey === key);
}

let browser: Browser;
let page: Page;
let weatherRunId: string;
let ticket: { runId: string; key: string };
let dashboard: Awaited<ReturnType<typeof startCommand>>;

beforeAll(async () => {
  const weather = await keel('run', 'weather.yaml', 'Weather in Paris?', '--json');
  expect(weather.code).toBe(0);
  weatherRunId = JSON.parse(weather.stdout).runId;
  ticket = await urgentTicket('Open an urgent ticket: the printer is on fire');
  [browser, dashboard] = await Promise.all([
    chromium.launch({ executablePath: process.env.KEEL_CHROMIUM_PATH ?? '/usr/bin/chromium' }),
    startCommand(),
  ]);
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  dashboard?.stop();
  await dashboard?.exited;
  rmSync(directory, { recursive: true, force: true });
}, 30_000);

describe('keel dashboard', () => {
  it('prints the page address with its generated token, on loopback', () => {
    expect(dashboard.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#token=[A-Za-z0-9_-]{32}$/);
    expect(dashboard.lines.join('\n')).toMatch(/token \S+ \(generated; set KEEL_DASHBOARD_TOKEN or --token/);
  });

  it('refuses to bind another host without a token, with exit code 2', async () => {
    const refused = await keel('dashboard', '--host', '0.0.0.0', '--port', '0');
    expect(refused.code).toBe(2);
    expect(refused.stdout).toMatch(/config\.invalid: Refusing to bind 0\.0\.0\.0 without a token/);
    expect(refused.stdout).toMatch(/guidance: .*KEEL_DASHBOARD_TOKEN/);
    expect((await keel('dashboard', '--port', 'eighty')).stdout).toMatch(/--port must be an integer/);
  });

  it('prints its usage with every flag and its default on --help, and exits 0', async () => {
    for (const flag of ['--help', '-h']) {
      const help = await keel('dashboard', flag);
      expect(help.code).toBe(0);
      for (const option of [
        '--store',
        '--port',
        '--host',
        '--token',
        '--agent',
        '--allow-key-host',
        '--json',
      ])
        expect(help.stdout).toContain(option);
      expect(help.stdout).toMatch(/--port N .*default: 4800/);
      expect(help.stdout).toMatch(/--host H .*default: 127\.0\.0\.1/);
      expect(help.stdout).toMatch(/--store .*default: \.\/\.keel\/keel\.db/);
      expect(help.stdout).toMatch(/default: KEEL_DASHBOARD_TOKEN, else one is generated/);
    }
    const unknown = await keel('dashboard', '--verbose');
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toMatch(/config\.invalid: .*--verbose.*keel dashboard --help/);
  });

  it('prints its start-up line as one JSON object with --json, the store password left out', async () => {
    const started = await startCommand(['--json', '--store', 'json.db'], {
      KEEL_DASHBOARD_TOKEN: 'json-dashboard-token-0123',
    });
    try {
      expect(started.lines).toHaveLength(1);
      const line = JSON.parse(started.lines[0]!);
      expect(line).toEqual({
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
        host: '127.0.0.1',
        port: Number(new URL(line.url).port),
        store: 'json.db',
        tokenGenerated: false,
      });
      expect(line.port).toBeGreaterThan(0);
    } finally {
      started.stop();
      expect(await started.exited).toBe(0);
    }
    // Nothing is asked of the store until a page is open: an unreachable PostgreSQL serves to check the printing.
    const postgres = await startCommand(['--json', '--store', 'postgres://keel:hunter2-pw@127.0.0.1:1/keel']);
    try {
      expect(JSON.parse(postgres.lines[0]!).store).toBe('postgres://keel:[redacted]@127.0.0.1:1/keel');
      expect(postgres.lines.join('\n')).not.toContain('hunter2');
    } finally {
      postgres.stop();
      await postgres.exited;
    }
    const generated = await startCommand(['--json']);
    try {
      const line = JSON.parse(generated.lines[0]!);
      expect(line.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#token=[A-Za-z0-9_-]{32}$/);
      expect(line).toMatchObject({ store: './.keel/keel.db', tokenGenerated: true });
    } finally {
      generated.stop();
      await generated.exited;
    }
  });

  it('passes --allow-key-host to the --agent files it loads, as keel run does', async () => {
    const refused = await keel('dashboard', '--port', '0', '--agent', 'local-llm.yaml');
    expect(refused.code).toBe(2);
    expect(refused.stdout).toMatch(/local-llm\.yaml:\d+:\d+: model\.baseUrl would receive the API key/);
    expect(refused.stdout).toMatch(/guidance: .*--allow-key-host 127\.0\.0\.1:4999/);
    const bad = await keel('dashboard', '--allow-key-host', 'http://x/');
    expect(bad.stdout).toMatch(/--allow-key-host takes a host name/);
    const allowed = await startCommand(['--agent', 'local-llm.yaml', '--allow-key-host', '127.0.0.1:4999']);
    allowed.stop();
    expect(await allowed.exited).toBe(0);
  });

  it('lists the runs keel run made, with their figures', async () => {
    await page.goto(dashboard.url);
    const weather = page.locator(`tr[data-run-id="${weatherRunId}"]`);
    const support = page.locator(`tr[data-run-id="${ticket.runId}"]`);
    await weather.waitFor();
    expect((await weather.locator('td').allTextContents()).slice(1, 8)).toEqual([
      'weather',
      'completed',
      'final_answer',
      expect.stringMatching(/ms$/),
      '4',
      '1',
      '1',
    ]);
    expect(await support.getAttribute('data-status')).toBe('interrupted');
    expect(await support.locator('td').nth(2).textContent()).toBe('interrupted 1 waiting');
  });

  it("draws a run's timeline with its retry and its fallback", async () => {
    await page.goto(`${new URL(dashboard.url).origin}/runs/${weatherRunId}`);
    const fallback = page.locator('table.timeline-entries tr[data-lane="fallback"]');
    await fallback.waitFor();
    expect(await fallback.locator('td').nth(1).textContent()).toBe(
      'fallback simulated/sim-primary → simulated/sim-fallback after provider.overloaded',
    );
    // Placed at their times from the run's journal: the retry (Retry-After 0: no wait) and the fallback.
    const retry = page.locator('table.timeline-entries tr[data-lane="retry"]');
    expect(await retry.locator('td').nth(1).textContent()).toBe(
      'retry of simulated/sim-primary (model) after provider.rate_limited on attempt 1, waited 0 ms',
    );
    expect(await retry.getAttribute('data-timing')).toBe('exact');
    expect(await fallback.getAttribute('data-timing')).toBe('exact');
    // What the chart itself holds (the canvas is pixels): the lanes of its points, read through Chart.js.
    const charted = await page.evaluate(() => {
      const scope = globalThis as unknown as {
        document: { querySelector(selector: string): unknown };
        Chart: {
          getChart(canvas: unknown): { data: { datasets: { data: { entry: { lane: string } }[] }[] } };
        };
      };
      const chart = scope.Chart.getChart(scope.document.querySelector('.run-timeline canvas'));
      return chart.data.datasets.flatMap((dataset) => dataset.data.map((point) => point.entry.lane));
    });
    expect(charted).toEqual(expect.arrayContaining(['model', 'retry', 'fallback', 'tool', 'checkpoint']));
  });

  it('approves an interrupted call from the page: the run resumes, completes, and the tool ran once', async () => {
    await page.goto(`${new URL(dashboard.url).origin}/runs/${ticket.runId}`);
    const card = page.locator(`article.decision[data-key="${ticket.key}"]`);
    await card.getByRole('button', { name: 'Approve' }).click();
    await page.locator('[data-testid="run-status"]', { hasText: 'completed' }).waitFor();
    await page.getByText('Resumed from this dashboard: the run stopped completed (final_answer).').waitFor();
    const ledger = page.locator('table.ledger tbody tr');
    expect(await ledger.count()).toBe(1);
    expect(await ledger.first().getAttribute('data-key')).toBe(ticket.key);
    expect(await ledger.first().getAttribute('data-status')).toBe('completed');
    expect(await page.locator('article.decision').count()).toBe(0);
    expect(tickets(ticket.key)).toHaveLength(1);
    const shown = await keel('runs', 'show', ticket.runId, '--json');
    expect(JSON.parse(shown.stdout).run.status).toBe('completed');
  });

  it('says what to do when no agent file is known for a run, and changes nothing', async () => {
    const stranger = await urgentTicket('Open an urgent ticket: the door is stuck');
    unlinkSync(invocationPath(directory, stranger.runId));
    await page.goto(`${new URL(dashboard.url).origin}/runs/${stranger.runId}`);
    await page
      .locator(`article.decision[data-key="${stranger.key}"]`)
      .getByRole('button', { name: 'Reject' })
      .click();
    const problem = page.locator('article.decision .problem');
    await problem.waitFor();
    expect(await problem.textContent()).toMatch(
      /config\.invalid: No agent file is known for run .*--agent <file>/,
    );
    expect(await page.locator('[data-testid="run-status"]').textContent()).toBe('interrupted');
  }, 120_000);

  it('resumes a run started elsewhere with the --agent file of its agent, rejecting with the reason', async () => {
    const stranger = await urgentTicket('Open an urgent ticket: no coffee');
    unlinkSync(invocationPath(directory, stranger.runId));
    const second = await startCommand(['--agent', 'support.yaml'], {
      KEEL_DASHBOARD_TOKEN: 'second-dashboard-token-0123',
    });
    try {
      expect(second.url).not.toMatch(/token/);
      await page.goto(`${second.url}/#token=second-dashboard-token-0123`);
      await page.goto(`${second.url}/runs/${stranger.runId}`);
      const card = page.locator(`article.decision[data-key="${stranger.key}"]`);
      await card.getByRole('textbox', { name: 'reason' }).fill('not urgent <b>at all</b>');
      await card.getByRole('button', { name: 'Reject' }).click();
      await page.locator('[data-testid="run-status"]', { hasText: 'completed' }).waitFor();
      const toolMessage = page.locator('.message-tool pre');
      expect(await toolMessage.textContent()).toMatch(/tool\.rejected.*not urgent <b>at all<\/b>/);
      expect(await page.locator('main b').count()).toBe(0);
      expect(await page.locator('table.ledger tbody tr').count()).toBe(0);
    } finally {
      second.stop();
      expect(await second.exited).toBe(0);
    }
  });
});
