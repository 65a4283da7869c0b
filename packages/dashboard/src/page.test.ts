// The real page in headless Chromium over runs made by keel's run loop: hostile content stays text, the list follows
// the store live, and the page's scripts never turn data into markup.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Agent, agent, MemoryRunStore, queuedRun } from '@keel/core';
import { scriptedModel } from '@keel/core/testing';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Dashboard, startDashboard } from './dashboard.js';
import { launchBrowser } from './test-support/browser.js';
import {
  fallbackRun,
  HOSTILE,
  interruptedRun,
  resumeWith,
  runHeldByWorker,
  uncertainRun,
} from './test-support/runs.js';

const store = new MemoryRunStore();
const agents = new Map<string, Agent<string>>();
let browser: Browser;
let dashboard: Dashboard;
let page: Page;
const pageErrors: string[] = [];
const consoleErrors: string[] = [];
const requested: string[] = [];

beforeAll(async () => {
  browser = await launchBrowser();
  dashboard = await startDashboard({ store, port: 0, pollIntervalMs: 50, resume: resumeWith(agents) });
  page = await browser.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(`${message.text()} ${message.location().url}`);
  });
  page.on('request', (request) => requested.push(request.url()));
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await dashboard?.close();
}, 30_000);

describe('the page', () => {
  it('shows a hostile tool argument and task as text, running none of it', async () => {
    const { runId, key } = await interruptedRun(store, { title: HOSTILE, task: `Open a ticket: ${HOSTILE}` });
    await page.goto(dashboard.pageUrl);
    await page.locator(`tr[data-run-id="${runId}"] a`).click();
    const card = page.locator(`article.decision[data-key="${key}"]`);
    await expect
      .poll(() => card.locator('pre.arguments').textContent())
      .toContain(HOSTILE.replace(/"/g, '\\"'));
    await expect
      .poll(() => page.locator('.message-user pre').textContent())
      .toBe(`Open a ticket: ${HOSTILE}`);
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('main img, main script').count()).toBe(0);
    expect(new URL(page.url()).hash).toBe('');
    expect(pageErrors).toEqual([]);
  });

  it('shows a run waiting for approval as waiting, with the buttons that answer it, not as an error', async () => {
    const { runId, key } = await interruptedRun(store, { title: 'Printer on fire' });
    await page.goto(`${dashboard.url}/runs/${runId}`);
    const card = page.locator(`article.decision-approval[data-key="${key}"]`);
    await card.getByRole('button', { name: 'Approve' }).waitFor();
    expect(await card.getByRole('button', { name: 'Reject' }).count()).toBe(1);
    expect(await page.locator('.run-decisions .waiting-state').textContent()).toContain(
      'The run is waiting, not failed',
    );
    expect(await page.locator('.error-panel').count()).toBe(0);
    expect(await page.locator('main').textContent()).not.toContain('Resume with approvals');
    expect(await page.locator('.report').textContent()).not.toContain('run.interrupted');
  });

  it("shows a run's cost in its report, by model", async () => {
    const priced = agent({
      name: 'priced',
      model: scriptedModel([{ content: 'hi', usage: { inputTokens: 10_000, outputTokens: 1_000 } }], {
        provider: 'openai',
        model: 'gpt-4.1-mini',
      }),
      store,
    });
    const { runId } = await priced.run('Say hi');
    // The page address carries the token the first time (other tests may have run before, or not).
    await page.goto(dashboard.pageUrl);
    await page.goto(`${dashboard.url}/runs/${runId}`);
    // gpt-4.1-mini: 10,000 input tokens at 0.4 and 1,000 output at 1.6 dollars per million.
    await expect
      .poll(() => page.locator('.report').textContent())
      .toContain('cost$0.005600 (openai/gpt-4.1-mini $0.005600)');
  });

  it("shows the cost of the session a run is on, over the session's runs", async () => {
    const model = scriptedModel(
      () => ({ content: 'hi', usage: { inputTokens: 10_000, outputTokens: 1_000 } }),
      {
        provider: 'openai',
        model: 'gpt-4.1-mini',
      },
    );
    const chatty = agent({ name: 'chatty', model, store });
    await chatty.run('Say hi', { sessionId: 'page-session' });
    const { runId } = await chatty.run('Say hi again', { sessionId: 'page-session' });
    await page.goto(dashboard.pageUrl);
    await page.goto(`${dashboard.url}/runs/${runId}`);
    // Two runs of 0.0056 dollars each.
    await expect
      .poll(() => page.locator('.report').textContent())
      .toContain('session cost$0.0112 (openai/gpt-4.1-mini $0.0112) over 2 runs of session page-session');
  });

  it('abandons a call that may have run: the run goes on without running it again', async () => {
    const { runId, key, executions, agent } = await uncertainRun(store);
    agents.set('billing', agent);
    await page.goto(`${dashboard.url}/runs/${runId}`);
    const card = page.locator(`article.decision-uncertain[data-key="${key}"]`);
    await card.getByText('may or may not have run before the process stopped').waitFor();
    await card.getByRole('button', { name: 'Abandon' }).click();
    await page.locator('[data-testid="run-status"]', { hasText: 'completed' }).waitFor();
    expect(await page.locator('.message-tool pre').textContent()).toMatch(/outcome is unknown/);
    expect(executions).toEqual([key]);
  });

  it('adds a run to the list while it is open, without a reload', async () => {
    await page.goto(dashboard.pageUrl);
    await page.locator('#live[data-state="live"]').waitFor();
    const rows = page.locator('tr[data-run-id]');
    const before = await rows.count();
    const runId = await fallbackRun(store);
    await page.locator(`tr[data-run-id="${runId}"][data-status="completed"]`).waitFor();
    expect(await rows.count()).toBe(before + 1);
    const cells = await page.locator(`tr[data-run-id="${runId}"] td`).allTextContents();
    expect(cells.slice(1, 8)).toEqual([
      'weather',
      'completed',
      'final_answer',
      expect.stringMatching(/ms$/),
      '4',
      '1',
      '1',
    ]);
  });

  it('filters by status and searches, keeping the filter in the address', async () => {
    await page.goto(`${dashboard.url}/?status=interrupted`);
    await page.locator('tr[data-run-id]').first().waitFor();
    expect(await page.locator('tr[data-run-id]:not([data-status="interrupted"])').count()).toBe(0);
    await page.locator('select[name="status"]').selectOption('');
    await page.locator('input[name="q"]').fill('weather');
    await expect.poll(() => page.locator('tr[data-run-id]').count()).toBe(1);
    expect(new URL(page.url()).search).toBe('?q=weather');
  });

  it('shows a queued run waiting for a worker, and the worker holding a running run', async () => {
    await store.createRun(
      queuedRun({ runId: 'queued-page', agentName: 'support', input: HOSTILE, nowMs: Date.now() - 65_000 }),
    );
    const held = await runHeldByWorker(store, {
      owner: 'host-c:777:abcdef01',
      task: 'When does order 42 ship?',
      submittedAtMs: Date.now() - 3_000,
    });
    try {
      await page.goto(`${dashboard.url}/?status=queued`);
      const queued = page.locator('tr[data-run-id="queued-page"]');
      await queued.waitFor();
      expect(await page.locator('tr[data-run-id]').count()).toBe(1);
      const cells = await queued.locator('td').allTextContents();
      expect(cells[0]).toBe(`queued-page${HOSTILE}`);
      expect(cells.slice(1, 5)).toEqual([
        'support',
        'queued',
        '–',
        expect.stringMatching(/^queued 1 min \d+ s$/),
      ]);
      expect(cells.at(-1)).toBe('waits for a worker');

      await page.locator('select[name="status"]').selectOption('running');
      const running = page.locator(`tr[data-run-id="${held.runId}"]`);
      await running.waitFor();
      expect(await running.locator('td.worker').textContent()).toBe('host-c:777:abcdef01');
      expect(await running.locator('td .task').textContent()).toBe('When does order 42 ship?');

      await page.goto(`${dashboard.url}/runs/queued-page`);
      await page.locator('[data-testid="run-status"]', { hasText: 'queued' }).waitFor();
      expect(await page.locator('.run-queue h2').textContent()).toBe('Waiting for a worker');
      expect(await page.locator('.run-queue p').textContent()).toMatch(/A worker serving agent support/);
      expect(await page.locator('.run-conversation h2').textContent()).toBe('Input (1)');
      expect(await page.locator('.message-user pre').textContent()).toBe(HOSTILE);
      const lane = page.locator('table.timeline-entries tr[data-lane="queue"] td');
      expect(await lane.nth(1).textContent()).toBe('queued: waits for a worker agent support');
      expect(await page.locator('.run-report, .run-ledger').allTextContents()).toEqual(['', '']);

      await page.goto(`${dashboard.url}/runs/${held.runId}`);
      await page.locator('[data-testid="run-worker"]').waitFor();
      expect(await page.locator('[data-testid="run-worker"]').textContent()).toMatch(
        /^worker host-c:777:abcdef01 · lease until /,
      );
      expect(await page.locator('.run-header .facts').first().textContent()).toMatch(/in the queue\)/);
      expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    } finally {
      held.release();
    }
    await held.finished;
  });

  it('asks for the token when the tab has none', async () => {
    const fresh = await browser.newPage();
    await fresh.goto(dashboard.url);
    await fresh.locator('form.token-form').waitFor();
    await fresh.locator('input[name="token"]').fill(dashboard.token);
    await fresh.locator('form.token-form button').click();
    await fresh.locator('tr[data-run-id]').first().waitFor();
    await fresh.close();
  });
});

describe('the page, all along', () => {
  it('asked nothing of another origin and broke no Content-Security-Policy rule', () => {
    expect(requested.length).toBeGreaterThan(10);
    expect(requested.filter((url) => !url.startsWith(`${dashboard.url}/`))).toEqual([]);
    expect(consoleErrors).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});

describe('the page scripts', () => {
  it('never parse data as HTML', () => {
    const directory = fileURLToPath(new URL('../assets/', import.meta.url));
    const offenders = readdirSync(directory)
      .filter((name) => name.endsWith('.js'))
      .flatMap((name) => {
        const text = readFileSync(`${directory}${name}`, 'utf8');
        return /innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/.test(text)
          ? [name]
          : [];
      });
    expect(offenders).toEqual([]);
  });
});
