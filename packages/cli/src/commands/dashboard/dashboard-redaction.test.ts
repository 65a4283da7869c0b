// The dashboard's API serves no API key value that keel run and keel runs show print as [redacted]: a run whose
// stored state holds the value of an *_API_KEY variable (here in its task, its messages and its answer) is read
// through GET /api/runs/ID, GET /api/runs and an error, from a real SQLite store.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteRunStore } from '@keel/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../main.js';
import type { Output } from '../../output/output.js';
import { dashboardCommand } from './dashboard.js';

const KEY = 'k3y-value-7f3a9c1e5b2d8f4a6c0e';
const directory = mkdtempSync(join(tmpdir(), 'keel-dashboard-redaction-'));
const environment = { NO_COLOR: '1', TRACKER_API_KEY: KEY };
const controller = new AbortController();
let runId: string;
let baseUrl: string;
let token: string;
let exited: Promise<number>;

function capture(lines: string[], onLine: (line: string) => void = () => {}): Output {
  return {
    out: (line) => {
      lines.push(line);
      onLine(line);
    },
    error: (line) => lines.push(line),
    colour: false,
  };
}

beforeAll(async () => {
  writeFileSync(join(directory, 'echo.yaml'), ['name: echo', 'model: simulated:sim-primary'].join('\n'));
  const lines: string[] = [];
  const code = await main(
    ['run', 'echo.yaml', `Remember this key: ${KEY}`, '--json'],
    environment,
    capture(lines),
    directory,
  );
  expect(code).toBe(0);
  expect(lines.join('\n')).not.toContain(KEY);
  runId = JSON.parse(lines.join('\n')).runId;
  // The store holds the value: the dashboard reads it as it is.
  const store = new SqliteRunStore(join(directory, '.keel', 'keel.db'));
  try {
    expect(JSON.stringify(await store.loadRun(runId))).toContain(KEY);
  } finally {
    await store.close();
  }
  const printed: string[] = [];
  const listening = new Promise<string>((resolve) => {
    exited = dashboardCommand(['--port', '0', '--json'], {
      environment,
      output: capture(printed, (line) => resolve((JSON.parse(line) as { url: string }).url)),
      workingDirectory: directory,
      signal: controller.signal,
    });
  });
  const pageUrl = new URL(await listening);
  token = pageUrl.hash.replace('#token=', '');
  baseUrl = pageUrl.origin;
}, 60_000);

afterAll(async () => {
  controller.abort();
  await exited;
  rmSync(directory, { recursive: true, force: true });
});

async function get(path: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, text: await response.text() };
}

describe('keel dashboard redacts API key values', () => {
  it('GET /api/runs/ID holds no key value, and says where it was', async () => {
    const { status, text } = await get(`/api/runs/${runId}`);
    expect(status).toBe(200);
    expect(text).not.toContain(KEY);
    expect(text).toContain('[redacted]');
    expect(() => JSON.parse(text)).not.toThrow();
  });

  it('GET /api/runs holds no key value', async () => {
    const { status, text } = await get('/api/runs');
    expect(status).toBe(200);
    expect(text).toContain(runId);
    expect(text).not.toContain(KEY);
  });

  it('an error naming the key holds no key value', async () => {
    const { status, text } = await get(`/api/runs?status=${KEY}`);
    expect(status).toBe(400);
    expect(text).not.toContain(KEY);
  });
});
