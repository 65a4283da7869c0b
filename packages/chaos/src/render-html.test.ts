// The HTML report in a real browser: headless Chromium (Debian's /usr/bin/chromium driven by playwright-core) opens
// the file offline and draws every chart; each canvas must hold drawn pixels, and no script may fail.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { renderHtml } from './render-html.js';
import { alignColumns, renderTable } from './render-table.js';
import type { ChaosReport } from './run-chaos.js';
import { selectScenarios } from './scenarios.js';
import { type RunSample, type ScenarioObservation, scorecardOf } from './scorecard.js';

/** What these tests read of a canvas (the type-check has no DOM types). */
interface Canvas {
  width: number;
  height: number;
  getContext(kind: '2d'): {
    getImageData(x: number, y: number, width: number, height: number): { data: Uint8ClampedArray };
  };
}

const CHROMIUM_PATH = process.env.KEEL_CHROMIUM_PATH ?? '/usr/bin/chromium';
const T0 = 1_700_000_000_000;
const directory = mkdtempSync(join(tmpdir(), 'keel-chaos-html-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function observation(subject: string, scenarioName: string, completed: number): ScenarioObservation {
  const scenario = selectScenarios([scenarioName])[0]!;
  const runs: RunSample[] = Array.from({ length: 10 }, (_, index) => ({
    runId: `run-${index}`,
    startedAtMs: T0 + index * 100,
    endedAtMs: T0 + index * 100 + 50 + index * 20,
    outcome: index < completed ? 'completed' : 'failed',
    ...(index < completed ? {} : { code: 'provider.overloaded' }),
  }));
  const window = { model: 'sim-primary', startMs: T0 + 300, endMs: T0 + 1_800, fault: 'unavailable' };
  const outage = scenario.primary?.outages !== undefined;
  return {
    scenario,
    subject,
    startedAtMs: T0,
    finishedAtMs: T0 + 2_500,
    runs,
    requests: Array.from({ length: 40 }, (_, index) => {
      const atMs = T0 + index * 60;
      const down = outage && atMs >= window.startMs && atMs < window.endMs && index % 3 === 0;
      return {
        model: down ? 'sim-primary' : 'sim-fallback',
        atMs,
        down,
        fault: down ? 'unavailable' : 'none',
      };
    }),
    effects: [],
    breakerMoves: [],
    windows: outage ? [window] : [],
    requestsPerCleanRun: 2,
  };
}

/** A report of two subjects in two scenarios, one with an outage window: what `keel chaos` and the peers write. */
function report(): ChaosReport {
  const calibration = {
    requestsPerRun: 2,
    effectsPerRun: 1,
    tools: ['get_weather'],
    answer: 'Here is what I found: get_weather returned "sunny".',
    firstPromptTokens: 100,
    largestPromptTokens: 150,
    durationMs: 20,
  };
  const scorecards = ['transient-30', 'outage-fallback'].flatMap((scenario) => [
    scorecardOf(observation('keel </script><b>x</b>', scenario, 10)),
    scorecardOf(observation('ai-sdk', scenario, 6)),
  ]);
  return {
    seed: 1,
    runs: 10,
    capMs: 30_000,
    task: 'What is the weather in Paris?',
    startedAt: new Date(T0).toISOString(),
    durationMs: 5_000,
    subjects: [
      { name: 'keel </script><b>x</b>', calibration },
      { name: 'ai-sdk', calibration },
    ],
    scenarios: selectScenarios(['transient-30', 'outage-fallback']).map(
      ({ name, title, description, goals }) => ({
        name,
        title,
        description,
        goals,
      }),
    ),
    scorecards,
  };
}

describe('the HTML report', () => {
  it('renders every chart in headless Chromium, offline, from one self-contained file', async () => {
    const html = renderHtml(report());
    expect(html).toContain('Chart.js v4.6.1');
    expect(html).not.toMatch(/<script[^>]+src=/);
    expect(html).not.toContain('<b>x</b>');
    const path = join(directory, 'report.html');
    writeFileSync(path, html);

    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true });
    try {
      const page = await browser.newPage();
      const failures: string[] = [];
      page.on('pageerror', (error) => failures.push(String(error)));
      page.on('console', (message) => {
        if (message.type() === 'error') failures.push(message.text());
      });
      // Nothing but the file itself may be fetched: the report works offline.
      await page.route('**/*', (route) =>
        route.request().url().startsWith('file:') ? route.continue() : route.abort(),
      );
      await page.goto(pathToFileURL(path).href);
      await page.waitForFunction(
        () => (globalThis as { keelChaosCharts?: number }).keelChaosCharts !== undefined,
      );
      const drawn = await page.evaluate(() => (globalThis as { keelChaosCharts?: number }).keelChaosCharts);
      // Three summary charts and one timeline per scenario and subject.
      expect(drawn).toBe(3 + 4);
      const painted = await page.$$eval('canvas', (canvases) =>
        canvases.map((canvas) => {
          const context = (canvas as unknown as Canvas).getContext('2d')!;
          const { data } = context.getImageData(
            0,
            0,
            (canvas as unknown as Canvas).width,
            (canvas as unknown as Canvas).height,
          );
          let coloured = 0;
          for (let index = 3; index < data.length; index += 4) if (data[index]! > 0) coloured++;
          return coloured;
        }),
      );
      expect(painted).toHaveLength(7);
      for (const pixels of painted) expect(pixels).toBeGreaterThan(2_000);
      // The outage window is marked on its timeline.
      const outage = await page.$eval('#scenario-outage-fallback canvas', (canvas) => {
        const context = (canvas as unknown as Canvas).getContext('2d')!;
        const { data } = context.getImageData(
          0,
          0,
          (canvas as unknown as Canvas).width,
          (canvas as unknown as Canvas).height,
        );
        let shaded = 0;
        for (let index = 0; index < data.length; index += 4) {
          // The band is translucent red; the bars are opaque.
          const alpha = data[index + 3]!;
          if (data[index]! > 200 && data[index + 1]! < 60 && alpha > 10 && alpha < 60) shaded++;
        }
        return shaded;
      });
      expect(outage).toBeGreaterThan(1_000);
      expect(await page.textContent('h1')).toContain('keel </script><b>x</b>, ai-sdk');
      expect(failures).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});

describe('the text table', () => {
  it('aligns columns and lists the goals missed with what was measured', () => {
    const text = renderTable(report());
    const lines = text.split('\n');
    expect(lines[0]).toMatch(
      /^scenario\s+subject\s+completed\s+req\/completed\s+cost\/completed\s+vs minimum/,
    );
    expect(lines[2]).toMatch(/^transient-30\s+keel <\/script><b>x<\/b>\s+100\.0%\s+4\.00/);
    expect(lines[3]).toMatch(
      /^transient-30\s+ai-sdk\s+60\.0%\s+6\.67\s+.*provider\.overloaded 4\s+missed: completion/,
    );
    expect(text).toContain(
      '  transient-30 (ai-sdk): >= 99.9% of runs complete (the whole answer, every tool run to its end); measured 60.0% complete',
    );
    expect(alignColumns(['a', 'bb'], [{ a: 'long value', bb: 'x' }])).toEqual([
      'a           bb',
      '----------  --',
      'long value  x',
    ]);
  });
});
