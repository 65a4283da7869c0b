// Takes the README's screenshots of the dashboard: makes a few runs with the built `keel` binary on the offline
// simulated provider (faults included), submits two to a fleet on a private Redis (one a `keel worker` holds, its
// model hanging; one no worker serves, left queued), serves `keel dashboard` over them, and photographs the run list
// and one run's timeline (from its journal) in headless Chromium. Run with `npm run screenshots -w @keel/dashboard`
// (it builds first; Redis comes from Debian's redis-server, as in the tests).
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
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

/** Starts a process and resolves once its output matches `ready`, with the match. */
function started(args, ready, options = {}) {
  const child = spawn(args[0], args.slice(1), { cwd: directory, env: environment, ...options });
  const matched = new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk) => {
      text += chunk;
      const match = ready.exec(text);
      if (match) resolve(match);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}: ${text}`)));
  });
  return { child, matched };
}

const redisPort = await new Promise((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address();
    probe.close(() => resolve(port));
  });
});
const redisUrl = `redis://127.0.0.1:${redisPort}`;
const redis = started(
  ['redis-server', '--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
  /Ready to accept connections/,
);
await redis.matched;
// The worker serves the weather agent only; its model hangs, so the run it takes stays running while it is pictured.
const worker = started(
  [process.execPath, binary, 'worker', 'weather.yaml', '--redis', redisUrl, '--faults', 'hang=1', '--json'],
  /"type":\s*"worker-ready"/,
);
await worker.matched;
const held = await keel('submit', 'weather.yaml', 'Weather in Tokyo?', '--redis', redisUrl);
const queued = await keel(
  'submit',
  'support.yaml',
  'Refund order 42: the parcel never arrived',
  '--redis',
  redisUrl,
);
console.log(
  `submitted run ${held.runId} (a worker takes it) and run ${queued.runId} (no worker serves support)`,
);

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
  await page.locator('tr[data-run-id]').nth(6).waitFor();
  await page.locator(`tr[data-run-id="${held.runId}"][data-status="running"] td.worker code`).waitFor();
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
  // The worker's run hangs on purpose: nothing of it is kept.
  worker.child.kill('SIGKILL');
  redis.child.kill('SIGTERM');
  rmSync(directory, { recursive: true, force: true });
}
