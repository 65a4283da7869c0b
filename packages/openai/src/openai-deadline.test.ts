// A 429 whose Retry-After ends after the run's deadline, over real sockets: keel does not wait for it (the wait would
// end after the run did) and goes to the fallback at once; with no fallback it fails at once with the wait it was
// asked for. Time is the agent's injected clock, which never moves here: a run that waited would never end, and a
// retry scheduled for the Retry-After ends the test at once.
import { agent, type RunEvent } from '@keel/core';
import { FakeClock, type HttpTestServer, sendJson, startHttpTestServer } from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { openaiCompatible } from './index.js';

const servers: HttpTestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const completion = (content: string) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});

async function rateLimitedServer(retryAfter: string): Promise<HttpTestServer> {
  const server = await startHttpTestServer((_request, response) =>
    sendJson(
      response,
      429,
      {
        error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' },
      },
      { 'retry-after': retryAfter },
    ),
  );
  servers.push(server);
  return server;
}

async function healthyServer(): Promise<HttpTestServer> {
  const server = await startHttpTestServer((_request, response) =>
    sendJson(response, 200, completion('from the fallback')),
  );
  servers.push(server);
  return server;
}

/** Runs `assistant` to its end; a `retry-scheduled` event (a wait for the Retry-After) fails the test at once. */
async function runWithoutWaiting(assistant: ReturnType<typeof agent>, events: RunEvent[]) {
  let refuse: (error: Error) => void = () => undefined;
  const waited = new Promise<never>((_resolve, reject) => {
    refuse = reject;
  });
  const run = assistant.run('Hi', {
    onEvent: (event) => {
      events.push(event);
      if (event.type === 'retry-scheduled')
        refuse(new Error(`the run waits ${event.delayMs} ms for ${event.errorCode}`));
    },
  });
  return Promise.race([run, waited]);
}

describe('a Retry-After longer than the run’s remaining time', () => {
  it('goes to the fallback at once (under 100 ms on the run’s clock), with honest waitingMs', async () => {
    const primary = await rateLimitedServer('8');
    const fallback = await healthyServer();
    const clock = new FakeClock();
    const events: RunEvent[] = [];
    const result = await runWithoutWaiting(
      agent({
        clock,
        model: openaiCompatible({ baseUrl: primary.url, model: 'primary' }),
        fallbacks: [openaiCompatible({ baseUrl: fallback.url, model: 'fallback' })],
        limits: { timeoutMs: 5_000 },
      }),
      events,
    );

    expect(result.status).toBe('completed');
    expect(result.output).toBe('from the fallback');
    expect(primary.requests).toHaveLength(1);
    expect(fallback.requests).toHaveLength(1);
    const started = events.find((event) => event.type === 'run-start')!;
    const fellBack = events.find((event) => event.type === 'fallback-used')!;
    expect(fellBack).toMatchObject({ errorCode: 'provider.rate_limited' });
    expect(fellBack.atMs - started.atMs).toBeLessThan(100);
    expect(result.report.durationMs).toBeLessThan(100);
    expect(result.report.waitingMs).toBe(0);
    expect(result.report.fallbacks.total).toBe(1);
  });

  it('with no fallback, fails at once with provider.rate_limited and the wait it was asked for', async () => {
    const primary = await rateLimitedServer('8');
    const clock = new FakeClock();
    const events: RunEvent[] = [];
    const result = await runWithoutWaiting(
      agent({
        clock,
        model: openaiCompatible({ baseUrl: primary.url, model: 'primary' }),
        limits: { timeoutMs: 5_000 },
      }),
      events,
    );

    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('provider.rate_limited');
    expect(result.error?.status).toBe(429);
    expect(result.error?.data).toMatchObject({ retryAfterMs: 8_000, reason: 'retry_after_past_deadline' });
    expect(primary.requests).toHaveLength(1);
    expect(result.report.durationMs).toBeLessThan(100);
    expect(result.report.waitingMs).toBe(0);
  });
});
