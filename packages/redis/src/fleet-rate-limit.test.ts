// Issue 11: three real processes share one rate limit of N calls per second through Redis ('wait' mode, no burst),
// calling a 127.0.0.1 server that counts what it receives per second: the fleet holds N, where limiters of their
// own would let 3 × N through.
import { type RecordedRequest, startHttpTestServer } from '@keel/core/testing';
import { expect, it } from 'vitest';
import { runFleet } from './test-support/fleet.js';
import { testRedisUrl, uniqueNamespace } from './test-support/test-redis.js';

const RATE_PER_SECOND = 20;
// Redis books turns exactly 1 / N apart, but a call can reach the server late (a process busy when its sleep ends)
// while the next ones are on time, squeezing more arrivals into one second: a little slack, far below the 3 × N
// (60) that three limiters of their own would allow.
const LIMIT_WITH_SLACK = RATE_PER_SECOND + 3;

it('holds a shared limit of N calls per second across three processes', async () => {
  const arrivals: Array<{ atMs: number; child: string }> = [];
  const server = await startHttpTestServer((request: RecordedRequest, response) => {
    arrivals.push({ atMs: Date.now(), child: String(request.headers['x-child']) });
    response.writeHead(200).end('ok');
  });
  try {
    const namespace = uniqueNamespace('fleet-rate');
    const reports = await runFleet(
      ['one', 'two', 'three'].map((child) => ({
        redisUrl: testRedisUrl(),
        namespace,
        serverUrl: server.url,
        child,
        durationMs: 2_500,
        policy: { kind: 'rate-limiter', ratePerSecond: RATE_PER_SECOND },
        pauseMs: 0,
      })),
    );
    expect(reports.map((report) => report.outages)).toEqual([0, 0, 0]);
    expect(arrivals.length).toBe(reports.reduce((sum, report) => sum + report.sentAtMs.length, 0));
    const times = arrivals.map(({ atMs }) => atMs).sort((left, right) => left - right);
    // The server's count per second, in every one-second window that starts at a call (a stricter test than
    // calendar seconds).
    const busiest = Math.max(
      ...times.map((startMs) => times.filter((atMs) => atMs >= startMs && atMs < startMs + 1_000).length),
    );
    expect(busiest).toBeLessThanOrEqual(LIMIT_WITH_SLACK);
    // Calendar seconds wholly inside the run: each holds the limit, and the fleet used it (the processes were not
    // starved or serialised behind one another).
    const firstSecond = Math.ceil(times[0]! / 1_000);
    const lastSecond = Math.floor(times.at(-1)! / 1_000);
    expect(lastSecond - firstSecond).toBeGreaterThanOrEqual(1);
    for (let second = firstSecond; second < lastSecond; second++) {
      const count = times.filter((atMs) => Math.floor(atMs / 1_000) === second).length;
      expect(count, `second ${second}`).toBeLessThanOrEqual(LIMIT_WITH_SLACK);
      expect(count, `second ${second}`).toBeGreaterThanOrEqual(RATE_PER_SECOND * 0.75);
    }
    // Every process had its share.
    for (const report of reports)
      expect(report.sentAtMs.length).toBeGreaterThanOrEqual(RATE_PER_SECOND * 0.25);
  } finally {
    await server.close();
  }
});
