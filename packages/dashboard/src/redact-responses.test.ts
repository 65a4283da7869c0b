import { MemoryRunStore } from '@keel/core';
import { afterEach, describe, expect, it } from 'vitest';
import { type Dashboard, startDashboard } from './dashboard.js';
import { send } from './test-support/http.js';
import { interruptedRun } from './test-support/runs.js';

const TOKEN = 'test-token-0123456789abcdef';
const SECRET = 'secret-value-4c2a9e7f1b3d';
let dashboard: Dashboard | undefined;
afterEach(async () => {
  await dashboard?.close();
  dashboard = undefined;
});

const redact = (text: string) => text.split(SECRET).join('[redacted]');

describe('the redact option', () => {
  it('rewrites run views, lists and errors; the JSON stays valid', async () => {
    const store = new MemoryRunStore();
    const { runId } = await interruptedRun(store, { title: `key ${SECRET}`, task: `Use ${SECRET}` });
    dashboard = await startDashboard({ store, port: 0, token: TOKEN, redact });
    const headers = { authorization: `Bearer ${TOKEN}` };
    for (const path of [`/api/runs/${runId}`, '/api/runs', `/api/runs/${SECRET}`]) {
      const response = await send(dashboard.url, path, { headers });
      expect(response.body).not.toContain(SECRET);
      expect(response.body).toContain('[redacted]');
      expect(() => JSON.parse(response.body)).not.toThrow();
    }
  });

  it('serves runs as stored without it', async () => {
    const store = new MemoryRunStore();
    const { runId } = await interruptedRun(store, { title: `key ${SECRET}` });
    dashboard = await startDashboard({ store, port: 0, token: TOKEN });
    const response = await send(dashboard.url, `/api/runs/${runId}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(response.body).toContain(SECRET);
  });

  it('must be a function', async () => {
    await expect(
      startDashboard({ store: new MemoryRunStore(), port: 0, redact: 'yes' as never }),
    ).rejects.toMatchObject({
      code: 'config.invalid',
      message: expect.stringMatching(/redact must be a function/),
    });
  });
});
