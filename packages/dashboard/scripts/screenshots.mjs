// Takes the README's screenshots of the dashboard: makes a few runs with the built `keel` binary on the offline
// simulated provider (faults included), serves `keel dashboard` over them, and photographs the run list and one
// run's timeline in headless Chromium. Run with `npm run screenshots -w @keel/dashboard` (it builds first).
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';

const binary = fileURLToPath(new URL('../../cli/bin/keel.js', import.meta.url));
const docs = fileURLToPath(new URL('../../../docs/', import.meta.url));
const directory = mkdtempSync(join(tmpdir(), 'keel-screenshots-'));
const environment = { ...process.env, NO_COLOR: '1' };

writeFileSync(
  join(directory, 'weather.yaml'),
  [
    'name: weather',
    'instructions: You help travellers. Use get_weather for each city you are asked about, then answer briefly.',
    'model: simulated:sim-primary',
    'fallbacks: [simulated:sim-fallback]',
    'tools: [get_weather]',
    'retry: { maxAttempts: 3 }',
  ].join('\n'),
);
writeFileSync(
  join(directory, 'support.yaml'),
  [
    'name: support',
    'instructions: Open a ticket with create_ticket and tell the customer its number.',
    'model: simulated:sim-primary',
    'tools: [create_ticket]',
    'retry: { maxAttempts: 1 }',
  ].join('\n'),
);

async function keel(...args) {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [binary, ...args, '--json'], {
      cwd: directory,
      env: environment,
    });
    return JSON.parse(stdout);
  } catch (error) {
    if (error.stdout) return JSON.parse(error.stdout);
    throw error;
  }
}

const demo = await keel('run', 'weather.yaml', 'Weather in Paris and Oslo?', '--faults', 'demo');
await keel('run', 'weather.yaml', 'Weather in Lisbon?');
await keel('run', 'support.yaml', 'Open an urgent ticket: the printer is on fire');
await keel('run', 'weather.yaml', 'Weather in Rome?', '--faults', 'server_error=1');
await keel('run', 'support.yaml', 'Open a ticket: the coffee machine leaks', '--faults', 'flaky');
console.log(`made 5 runs in ${directory}; the timeline shows run ${demo.runId}`);

const server = spawn(process.execPath, [binary, 'dashboard', '--port', '0'], {
  cwd: directory,
  env: environment,
});
const pageUrl = await new Promise((resolve, reject) => {
  let text = '';
  server.stdout.on('data', (chunk) => {
    text += chunk;
    const match = /keel dashboard {2}(\S+)/.exec(text);
    if (match) resolve(match[1]);
  });
  server.once('exit', (code) => reject(new Error(`keel dashboard exited with ${code}: ${text}`)));
});

const browser = await chromium.launch({
  executablePath: process.env.KEEL_CHROMIUM_PATH ?? '/usr/bin/chromium',
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 760 }, deviceScaleFactor: 1 });
  await page.goto(pageUrl);
  await page.locator('#live[data-state="live"]').waitFor();
  await page.locator('tr[data-run-id]').nth(4).waitFor();
  mkdirSync(docs, { recursive: true });
  await page.screenshot({ path: join(docs, 'dashboard-runs.png') });

  await page.goto(`${new URL(pageUrl).origin}/runs/${demo.runId}`);
  const timeline = page.locator('.run-timeline');
  await timeline.locator('table.timeline-entries tr[data-lane="fallback"]').waitFor();
  const box = await timeline.boundingBox();
  await page.screenshot({
    path: join(docs, 'dashboard-timeline.png'),
    fullPage: true,
    clip: { x: 0, y: 0, width: 1280, height: Math.ceil(box.y + box.height + 16) },
  });
  console.log(`wrote ${join(docs, 'dashboard-runs.png')} and ${join(docs, 'dashboard-timeline.png')}`);
} finally {
  await browser.close();
  server.kill('SIGINT');
  rmSync(directory, { recursive: true, force: true });
}
