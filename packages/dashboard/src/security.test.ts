import { MemoryRunStore } from '@keel/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Dashboard, startDashboard } from './dashboard.js';
import { isLoopbackHost } from './options.js';
import type { ResumeRequest } from './resume.js';
import { send } from './test-support/http.js';
import { interruptedRun } from './test-support/runs.js';

const TOKEN = 'test-token-0123456789abcdef';

describe('binding', () => {
  it.each(['0.0.0.0', '::', '192.0.2.10', 'example.com'])(
    'refuses to bind %s without a token',
    async (host) => {
      await expect(startDashboard({ store: new MemoryRunStore(), host, port: 0 })).rejects.toMatchObject({
        code: 'config.invalid',
        message: expect.stringMatching(
          new RegExp(`Refusing to bind ${host.replace(/\./g, '\\.')} without a token`),
        ),
        guidance: expect.stringMatching(/KEEL_DASHBOARD_TOKEN/),
      });
    },
  );

  it('binds a non-loopback host when given a token', async () => {
    const dashboard = await startDashboard({
      store: new MemoryRunStore(),
      host: '0.0.0.0',
      port: 0,
      token: TOKEN,
    });
    try {
      expect(dashboard.tokenGenerated).toBe(false);
      const port = new URL(dashboard.url).port;
      const response = await send(`http://127.0.0.1:${port}`, '/api/runs', {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(response.status).toBe(200);
    } finally {
      await dashboard.close();
    }
  });

  it('makes up a token on loopback and puts it in the page URL fragment', async () => {
    const dashboard = await startDashboard({ store: new MemoryRunStore(), port: 0 });
    try {
      expect(dashboard.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(dashboard.tokenGenerated).toBe(true);
      expect(dashboard.token.length).toBeGreaterThanOrEqual(32);
      expect(dashboard.pageUrl).toBe(`${dashboard.url}/#token=${dashboard.token}`);
    } finally {
      await dashboard.close();
    }
  });

  it.each([
    [{ token: 'short' }, /at least 16 characters/],
    [{ token: 'has spaces in it, sixteen+' }, /may hold only letters/],
    [{ port: 70_000 }, /port must be an integer from 0 to 65535/],
    [{ host: '' }, /host must be a host name/],
    [{ pollIntervalMs: 1 }, /pollIntervalMs must be an integer >= 10/],
    [{ prot: 80 }, /Unknown startDashboard option prot .*did you mean port\?/],
  ])('rejects %j', async (options, message) => {
    await expect(startDashboard({ store: new MemoryRunStore(), ...options })).rejects.toMatchObject({
      code: 'config.invalid',
      message: expect.stringMatching(message),
    });
  });

  it('says when the port is taken', async () => {
    const first = await startDashboard({ store: new MemoryRunStore(), port: 0 });
    try {
      const port = Number(new URL(first.url).port);
      await expect(startDashboard({ store: new MemoryRunStore(), port })).rejects.toMatchObject({
        code: 'config.invalid',
        guidance: expect.stringMatching(/--port/),
      });
    } finally {
      await first.close();
    }
  });

  it.each([
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['localhost', true],
    ['::1', true],
    ['[::1]', true],
    ['0.0.0.0', false],
    ['::', false],
    ['10.0.0.1', false],
    ['localhost.example.com', false],
  ])('isLoopbackHost(%s) is %s', (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
  });
});

describe('requests', () => {
  const store = new MemoryRunStore();
  const resumed: ResumeRequest[] = [];
  let dashboard: Dashboard;
  let runId: string;
  let key: string;
  const decide = (
    headers: Record<string, string>,
    body = JSON.stringify({ answers: [{ idempotencyKey: key, answer: 'approve' }] }),
  ) => send(dashboard.url, `/api/runs/${runId}/decisions`, { method: 'POST', headers, body });
  const authorised = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

  beforeAll(async () => {
    ({ runId, key } = await interruptedRun(store, { title: 'printer on fire' }));
    dashboard = await startDashboard({
      store,
      port: 0,
      token: TOKEN,
      resume: async (request) => {
        resumed.push(request);
        return { finished: Promise.resolve({ status: 'completed', stopReason: 'final_answer' }) };
      },
    });
  });
  afterAll(() => dashboard.close());

  it('serves the page without the token, under a strict Content-Security-Policy', async () => {
    const response = await send(dashboard.url, '/');
    expect(response.status).toBe(200);
    const policy = String(response.headers['content-security-policy']);
    expect(policy).toMatch(/default-src 'none'/);
    expect(policy).toMatch(/script-src 'self'(;|$)/);
    expect(policy).not.toMatch(/unsafe-inline|unsafe-eval|http/);
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect((await send(dashboard.url, '/assets/chart.umd.min.js')).status).toBe(200);
    expect((await send(dashboard.url, '/assets/..%2Fpackage.json')).status).toBe(404);
  });

  it.each([
    [{}, /Missing Authorization/],
    [{ authorization: 'Bearer wrong-token-0123456789' }, /Wrong token/],
  ])('refuses API reads without the right token (%j)', async (headers, message) => {
    const response = await send(dashboard.url, '/api/runs', { headers });
    expect(response.status).toBe(401);
    expect(response.body).toMatch(message);
    expect(response.body).not.toContain(runId);
  });

  it('refuses a decision without the token, and resumes nothing', async () => {
    const response = await decide({ 'content-type': 'application/json' });
    expect(response.status).toBe(401);
    expect(resumed).toEqual([]);
  });

  it.each([
    [{ origin: 'http://evil.example' }],
    [{ origin: 'null' }],
    [{ 'sec-fetch-site': 'cross-site' }],
    [{ 'sec-fetch-site': 'same-site' }],
  ])('refuses a decision from another origin even with the token (%j)', async (headers) => {
    const response = await decide({ ...authorised, ...headers });
    expect(response.status).toBe(403);
    expect(JSON.parse(response.body).error.message).toMatch(/Cross-origin/);
    expect(resumed).toEqual([]);
  });

  it('refuses a decision sent as a form body (what a cross-site form could send)', async () => {
    const response = await decide({ authorization: `Bearer ${TOKEN}`, 'content-type': 'text/plain' });
    expect(response.status).toBe(415);
    expect(resumed).toEqual([]);
  });

  it('refuses requests addressed to a rebound host name', async () => {
    const port = new URL(dashboard.url).port;
    const response = await send(dashboard.url, '/api/runs', {
      headers: { authorization: `Bearer ${TOKEN}`, host: `evil.example:${port}` },
    });
    expect(response.status).toBe(403);
  });

  it.each([
    [{ answers: [] }, /one answer at least/],
    [
      { answers: [{ idempotencyKey: 'nope:1:0', answer: 'approve' }] },
      /does not wait for a decision about call nope:1:0/,
    ],
    [
      { answers: [{ idempotencyKey: 'KEY', answer: 'execute' }] },
      /waits for approval: answer approve or reject/,
    ],
    [
      { answers: [{ idempotencyKey: 'KEY', answer: 'approve', reason: 'x' }] },
      /Only a rejection takes a reason/,
    ],
  ])('refuses malformed answers %j', async (body, message) => {
    const text = JSON.stringify(body).replace('KEY', key);
    const response = await decide(authorised, text);
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body).error).toMatchObject({
      code: 'config.invalid',
      message: expect.stringMatching(message),
    });
    expect(resumed).toEqual([]);
  });

  it('answers a same-origin decision with the token: the run is resumed with the approval', async () => {
    const port = new URL(dashboard.url).port;
    const response = await decide({
      ...authorised,
      origin: `http://127.0.0.1:${port}`,
      'sec-fetch-site': 'same-origin',
    });
    expect(response.status).toBe(202);
    expect(resumed).toEqual([
      { runId, agentName: 'support', approvals: { [key]: { approved: true } }, decisions: {} },
    ]);
    const view = await send(dashboard.url, `/api/runs/${runId}`, { headers: authorised });
    expect(JSON.parse(view.body).resume).toMatchObject({
      available: true,
      active: false,
      last: { outcome: { status: 'completed', stopReason: 'final_answer' } },
    });
  });

  it('says 404 with store.not_found for an unknown run', async () => {
    const response = await send(dashboard.url, '/api/runs/no-such-run', { headers: authorised });
    expect(response.status).toBe(404);
    expect(JSON.parse(response.body).error.code).toBe('store.not_found');
  });
});
