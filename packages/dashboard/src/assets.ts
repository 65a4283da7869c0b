import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KeelError } from '@keel/core';

/** A file the page loads, held in memory. */
export interface Asset {
  body: string;
  contentType: string;
}

/** The page's own files, in `assets/` beside `src/` and `dist/`. */
const PAGE_FILES = [
  'index.html',
  'style.css',
  'app.js',
  'api.js',
  'dom.js',
  'format.js',
  'runs-page.js',
  'run-page.js',
  'run-panels.js',
  'decisions.js',
  'timeline-panel.js',
  'timeline-chart.js',
];

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
};

/**
 * Reads the page's files and Chart.js's browser build (from its package in node_modules: no CDN, the page works
 * offline), keyed by the name they are served under.
 */
export async function loadAssets(): Promise<Map<string, Asset>> {
  const pageDirectory = fileURLToPath(new URL('../assets/', import.meta.url));
  const chartDirectory = dirname(createRequire(import.meta.url).resolve('chart.js'));
  const files: [string, string][] = [
    ...PAGE_FILES.map((name): [string, string] => [name, join(pageDirectory, name)]),
    ['chart.umd.min.js', join(chartDirectory, 'chart.umd.min.js')],
  ];
  const assets = new Map<string, Asset>();
  for (const [name, path] of files) {
    try {
      assets.set(name, {
        body: await readFile(path, 'utf8'),
        contentType: TYPES[name.slice(name.lastIndexOf('.'))]!,
      });
    } catch (error) {
      throw new KeelError(
        'config.invalid',
        `The dashboard cannot read its file ${path}: ${(error as Error).message}`,
        {
          guidance: 'Reinstall @keel/dashboard (its assets folder and the chart.js package must be present).',
        },
      );
    }
  }
  return assets;
}
