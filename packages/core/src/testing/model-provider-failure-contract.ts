import { agent } from '../agent/agent.js';
import type { ModelRequest } from '../spec/model.js';
import type { RunEvent } from '../spec/run-events.js';
import { MemoryRunStore } from '../store/memory-run-store.js';
import { sendJson } from './http-test-server.js';
import { CONTRACT_KEYS, type ContractHarness, keyShownIn } from './model-provider-contract-support.js';
import type { WireErrorKind } from './model-provider-wire.js';
import { describe, expect, it } from './vitest-functions.js';

/**
 * The failures of {@link modelProviderContract}: statuses and errors mid-stream classified, and the API key kept out
 * of every error, event and stored state, whatever the server echoes. Called inside its `describe`.
 */
export function modelProviderFailureContract(harness: ContractHarness): void {
  statusCases(harness);
  keyCases(harness);
}

function statusCases(harness: ContractHarness): void {
  const { wire } = harness;

  it('a 429 with Retry-After is provider.rate_limited with retryAfterMs', async () => {
    await harness.serve((_request, response) =>
      sendJson(response, 429, wire.error('rate_limit', 'Rate limit reached'), { 'retry-after': '2' }),
    );
    expect(await harness.failure()).toMatchObject({
      code: 'provider.rate_limited',
      retryable: true,
      retryAfterMs: 2_000,
      status: 429,
    });
  });

  it.each([
    [500, 'provider.server_error'],
    [503, 'provider.overloaded'],
  ])('a %i is %s, retryable', async (status, code) => {
    await harness.serve((_request, response) =>
      sendJson(response, status, wire.error('server', 'Internal server error')),
    );
    expect(await harness.failure()).toMatchObject({ code, retryable: true, status });
  });

  it("a 502 with a proxy's HTML page is provider.server_error, retryable", async () => {
    await harness.serve((_request, response) => {
      response.writeHead(502, { 'content-type': 'text/html' });
      response.end('<html>upstream trouble</html>');
    });
    expect(await harness.failure()).toMatchObject({
      code: 'provider.server_error',
      retryable: true,
      status: 502,
    });
  });

  it('a 401 is provider.auth, not retryable', async () => {
    await harness.serve((_request, response) => sendJson(response, 401, wire.error('auth', 'invalid key')));
    expect(await harness.failure()).toMatchObject({ code: 'provider.auth', retryable: false, status: 401 });
  });

  it('an error mid-stream is classified from its body, after the deltas before it', async () => {
    await harness.serveStream(
      [
        ...wire.stream.start,
        wire.stream.text('Hel'),
        wire.stream.error(wire.error('rate_limit', 'Rate limit')),
      ],
      'end',
    );
    const deltas: string[] = [];
    const error = await harness.failure({ onTextDelta: (delta) => deltas.push(delta) });
    expect(error).toMatchObject({ code: 'provider.rate_limited', retryable: true });
    expect(deltas).toEqual(['Hel']);
  });
}

function keyCases(harness: ContractHarness): void {
  const { wire } = harness;

  describe.each(Object.entries(CONTRACT_KEYS))('with a %s key', (_shape, key) => {
    /** An error body that echoes the key in its message and in fields beside it. */
    const echoing = (kind: WireErrorKind) => ({
      ...(wire.error(kind, `Incorrect API key provided: ${key}.`) as Record<string, unknown>),
      echoed: { key, header: `authorization: Bearer ${key}` },
    });
    const failure = (overrides: Partial<ModelRequest> = {}) => harness.failure(overrides, { apiKey: key });
    const expectKeyAbsent = (value: unknown): void => {
      expect(keyShownIn(value, key)).toBeUndefined();
    };
    const expectKeySent = (): void => {
      expect(JSON.stringify(harness.server().requests[0]!.headers)).toContain(key);
    };

    it.each([
      [401, 'auth', 'provider.auth'],
      [429, 'rate_limit', 'provider.rate_limited'],
      [500, 'server', 'provider.server_error'],
    ] as const)('keeps it out of a %i whose body and headers echo it', async (status, kind, code) => {
      await harness.serve((_request, response) =>
        sendJson(response, status, echoing(kind), { 'x-echo-key': key, 'retry-after': '1' }),
      );
      const error = await failure();
      expectKeySent();
      expect(error).toMatchObject({ code, status });
      expect(error.message).toContain('Incorrect API key provided: [redacted]');
      expectKeyAbsent(error);
    });

    it.each([
      [500, 'text/plain', `upstream refused the credential ${key}`],
      [200, 'application/json', `<html>proxy saw ${key}</html>`],
    ])('keeps it out of a %i body that is not JSON and echoes it', async (status, type, body) => {
      await harness.serve((_request, response) => {
        response.writeHead(status, { 'content-type': type });
        response.end(body);
      });
      const error = await failure();
      expect(error.code).toBe(status === 200 ? 'provider.invalid_response' : 'provider.server_error');
      expectKeyAbsent(error);
    });

    it('keeps it out of an error mid-stream that echoes it', async () => {
      await harness.serveStream([...wire.stream.start, wire.stream.error(echoing('server'))], 'end');
      expectKeyAbsent(await failure({ onTextDelta: () => undefined }));
    });

    it('keeps it out of a failed run: its result, events and stored state', async () => {
      await harness.serve((_request, response) => sendJson(response, 401, echoing('auth')));
      const store = new MemoryRunStore();
      const events: RunEvent[] = [];
      const result = await agent({ model: harness.model({ apiKey: key }), store }).run('Hi', {
        onEvent: (event) => events.push(event),
      });
      expect(result.status).toBe('failed');
      expect(result.error?.code).toBe('provider.auth');
      expectKeySent();
      expectKeyAbsent(result);
      expectKeyAbsent(events);
      expectKeyAbsent(await store.loadRun(result.runId));
    });
  });
}
