import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type HttpTestServer, type RecordedRequest, sendJson, startHttpTestServer } from '@keel/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KeelOutcome, keelBinary } from './test-support/keel-cli.js';

const directory = mkdtempSync(join(tmpdir(), 'keel-keys-'));
const KEY = `gsk_${'7hQ2xL9v'.repeat(6)}`;
const CLOUD_KEY = `sk-proj-${'Zr4Tq8Wm'.repeat(5)}`;
const AWS_SECRET = `wJalrXUtnFEMI/K7MDENG/${'bPxRfiCYEXAMPLEKEY'}`;

let server: HttpTestServer;
let host: string;

function completion(request: RecordedRequest): Record<string, unknown> {
  const { messages } = request.json() as { messages: { role: string }[] };
  const answered = messages.some((message) => message.role === 'tool');
  const message = answered
    ? { role: 'assistant', content: 'Ticket opened.' }
    : {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'create_ticket', arguments: '{"title":"Printer on fire","priority":"urgent"}' },
          },
        ],
      };
  return {
    id: `chatcmpl-${request.index}`,
    object: 'chat.completion',
    model: 'm',
    choices: [{ index: 0, message, finish_reason: answered ? 'stop' : 'tool_calls' }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

beforeAll(async () => {
  server = await startHttpTestServer((request, response) => {
    const sent = String(request.headers.authorization ?? '');
    if (request.url.startsWith('/echo401/')) {
      sendJson(response, 401, {
        error: {
          message: `Incorrect API key provided: ${sent.replace('Bearer ', '')}`,
          code: 'invalid_api_key',
        },
      });
    } else if (request.url.startsWith('/echo500/')) {
      sendJson(response, 500, { error: { message: `upstream failed for ${sent}`, type: 'server_error' } });
    } else {
      sendJson(response, 200, completion(request));
    }
  });
  host = `127.0.0.1:${server.port}`;
  const file = (name: string, model: string) =>
    writeFileSync(
      join(directory, name),
      ['name: keys', `model: ${model}`, 'tools: [create_ticket]', 'retry: { maxAttempts: 1 }'].join('\n'),
    );
  const url = (path: string) => `http://${host}/${path}/v1`;
  file(
    'aws.yaml',
    `{ provider: openai, name: m, baseUrl: "${url('ok')}", apiKeyEnv: AWS_SECRET_ACCESS_KEY }`,
  );
  file(
    'default-key.yaml',
    `{ provider: openai, name: m, baseUrl: "${url('ok')}", apiKeyEnv: OPENAI_API_KEY }`,
  );
  file('keyless.yaml', `{ provider: openai, name: m, baseUrl: "${url('ok')}" }`);
  file('local.yaml', `{ provider: openai, name: m, baseUrl: "${url('ok')}", apiKeyEnv: LOCAL_API_KEY }`);
  file(
    'echo401.yaml',
    `{ provider: openai, name: m, baseUrl: "${url('echo401')}", apiKeyEnv: LOCAL_API_KEY }`,
  );
  file(
    'echo500.yaml',
    `{ provider: openai, name: m, baseUrl: "${url('echo500')}", apiKeyEnv: LOCAL_API_KEY }`,
  );
});
afterAll(async () => {
  await server.close();
  rmSync(directory, { recursive: true, force: true });
});

type Outcome = KeelOutcome;

async function keel(...args: string[]): Promise<Outcome> {
  return keelBinary(
    {
      cwd: directory,
      env: {
        PATH: process.env.PATH,
        NO_COLOR: '1',
        AWS_SECRET_ACCESS_KEY: AWS_SECRET,
        OPENAI_API_KEY: CLOUD_KEY,
        LOCAL_API_KEY: KEY,
      },
    },
    ...args,
  );
}

function requestsSince(count: number): RecordedRequest[] {
  return server.requests.slice(count);
}

describe('what an agent file can make keel send', () => {
  it('refuses an arbitrary variable sent to an arbitrary host, before any request', async () => {
    const before = server.requests.length;
    const outcome = await keel('run', 'aws.yaml', 'Open an urgent ticket', '--allow-key-host', host);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toMatch(
      /config\.invalid: .*aws\.yaml:2:\d+: model\.apiKeyEnv must name an API key variable, upper case and ending in _API_KEY or _API_TOKEN \(got AWS_SECRET_ACCESS_KEY\)/,
    );
    expect(requestsSince(before)).toEqual([]);
  });

  it('refuses to send the OpenAI key to a host that is not OpenAI, unless --allow-key-host names it', async () => {
    const before = server.requests.length;
    const outcome = await keel('run', 'default-key.yaml', 'Open an urgent ticket');
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toMatch(
      new RegExp(
        `model\\.baseUrl would receive the API key in OPENAI_API_KEY, but ${host} is not openai's own host`,
      ),
    );
    expect(outcome.stderr).toMatch(new RegExp(`guidance: .*--allow-key-host ${host}`));
    expect(requestsSince(before)).toEqual([]);
  });

  it('sends no key to an OpenAI-compatible server that the file names no key for', async () => {
    const before = server.requests.length;
    const outcome = await keel('run', 'keyless.yaml', 'Open an urgent ticket', '--json');
    expect(JSON.parse(outcome.stdout).status).toBe('interrupted');
    const sent = requestsSince(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.headers.authorization).toBeUndefined();
  });

  it('sends the named key to an allowed host, and resume remembers the allowed host', async () => {
    const before = server.requests.length;
    const first = JSON.parse(
      (await keel('run', 'local.yaml', 'Open an urgent ticket', '--allow-key-host', host, '--json')).stdout,
    );
    expect(first.status).toBe('interrupted');
    expect(requestsSince(before).map((request) => request.headers.authorization)).toEqual([`Bearer ${KEY}`]);
    const resumed = await keel('resume', first.runId, '--approve', first.pending[0].idempotencyKey, '--json');
    expect(resumed.stderr).toBe('');
    expect(JSON.parse(resumed.stdout).status).toBe('completed');
  });
});

describe('no key value in what keel prints', () => {
  it.each(['echo401.yaml', 'echo500.yaml'])('a run whose server echoes the key (%s)', async (file) => {
    for (const json of [false, true]) {
      const outcome = await keel(
        'run',
        file,
        'Open an urgent ticket',
        '--allow-key-host',
        host,
        ...(json ? ['--json'] : []),
      );
      expect(outcome.code).toBe(1);
      expect(`${outcome.stdout}${outcome.stderr}`).toMatch(/provider\.(auth|server_error)/);
      expect(outcome.stdout + outcome.stderr).not.toContain(KEY);
      if (json) {
        const { runId } = JSON.parse(outcome.stdout);
        for (const args of [
          ['runs', 'show', runId, '--json'],
          ['runs', 'show', runId],
          ['runs', 'list', '--json'],
        ]) {
          const shown = await keel(...args);
          expect(shown.stdout + shown.stderr, args.join(' ')).not.toContain(KEY);
        }
      }
    }
  });
});
