// Takes the documentation's screenshot of a chaos report: runs `keel chaos examples/weather.yaml` (the built binary,
// offline on the simulated provider, 5 runs per scenario), and photographs the HTML report it writes in headless
// Chromium (Debian's, through playwright-core, as the dashboard's tests do). Not run in CI:
//   npm run screenshots      (builds, then the dashboard's screenshots, then this one)
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('..', import.meta.url));
const directory = mkdtempSync(join(tmpdir(), 'keel-chaos-screenshot-'));
const report = join(directory, 'report.html');
try {
  await promisify(execFile)(
    process.execPath,
    [
      join(root, 'packages/cli/bin/keel.js'),
      'chaos',
      join(root, 'examples/weather.yaml'),
      '--runs',
      '5',
      '--html',
      report,
    ],
    { cwd: directory, env: { ...process.env, NO_COLOR: '1' }, maxBuffer: 16 * 1024 * 1024 },
  ).catch((error) => {
    // keel chaos exits 1 when a goal is missed; the report is written all the same.
    if (error.code !== 1) throw error;
  });
  const browser = await chromium.launch({
    executablePath: process.env.KEEL_CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(pathToFileURL(report).href);
    await page.screenshot({ path: join(root, 'docs/chaos-report.png'), fullPage: false });
  } finally {
    await browser.close();
  }
  console.log('wrote docs/chaos-report.png');
} finally {
  rmSync(directory, { recursive: true, force: true });
}
