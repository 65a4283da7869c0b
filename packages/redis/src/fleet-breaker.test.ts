// Issue 11: three real processes share one breaker through Redis, calling a provider that is down (a 127.0.0.1 server
// that answers 503 and counts what it receives). Together they send at most one probe per half-open interval, and
// each stops calling within one request of the breaker opening.
import { type RecordedRequest, startHttpTestServer } from '@keel/core/testing';
import { expect, it } from 'vitest';
import { runFleet } from './test-support/fleet.js';
import { testRedisUrl, uniqueNamespace } from './test-support/test-redis.js';

const HALF_OPEN_AFTER_MS = 250;

it('probes a dead provider once per half-open interval for the whole fleet, and stops every process at once', async () => {
  const arrivals: Array<{ atMs: number; child: string }> = [];
  const server = await startHttpTestServer((request: RecordedRequest, response) => {
    arrivals.push({ atMs: Date.now(), child: String(request.headers['x-child']) });
    response.writeHead(503).end('down');
  });
  try {
    const namespace = uniqueNamespace('fleet-breaker');
    const reports = await runFleet(
      ['one', 'two', 'three'].map((child) => ({
        redisUrl: testRedisUrl(),
        namespace,
        serverUrl: server.url,
        child,
        durationMs: 2_000,
        policy: { kind: 'breaker', threshold: 3, halfOpenAfterMs: HALF_OPEN_AFTER_MS },
        pauseMs: 2,
      })),
    );
    expect(reports.map((report) => report.outages)).toEqual([0, 0, 0]);
    // The server counted every call the processes let through.
    expect(arrivals.length).toBe(reports.reduce((sum, report) => sum + report.sentAtMs.length, 0));

    // Every process heard the same transitions (its own and the others', by pub/sub), in the same order; a process
    // that stopped first may have missed the last ones.
    const moves = reports.map((report) =>
      report.transitions.map(({ from, to, reason, atMs }) => `${from}>${to}:${reason}@${atMs}`),
    );
    const heardByAll = Math.min(...moves.map((list) => list.length));
    expect(heardByAll).toBeGreaterThanOrEqual(5);
    for (const list of moves) expect(list.slice(0, heardByAll)).toEqual(moves[0]!.slice(0, heardByAll));
    const transitions = reports.reduce(
      (longest, report) => (report.transitions.length > longest.length ? report.transitions : longest),
      reports[0]!.transitions,
    );
    const opened = transitions[0]!;
    expect(opened).toMatchObject({ from: 'closed', to: 'open', reason: 'failure-threshold' });

    // Within one request of the opening: each process sent at most one call during the first open period.
    for (const report of reports) {
      const late = report.sentAtMs.filter(
        (atMs) => atMs > opened.atMs && atMs < opened.atMs + HALF_OPEN_AFTER_MS,
      );
      expect(
        late.length,
        `${report.child} called ${late.length} times while the breaker was open`,
      ).toBeLessThanOrEqual(1);
    }

    // Half-open intervals: from the end of each open period to the move that ended it (a failed probe reopens it).
    const intervals: Array<[number, number]> = [];
    transitions.forEach((move, index) => {
      if (move.to !== 'half-open') return;
      intervals.push([move.atMs, transitions[index + 1]?.atMs ?? Number.POSITIVE_INFINITY]);
    });
    expect(intervals.length).toBeGreaterThanOrEqual(3);
    const probes = intervals.map(
      ([startMs, endMs]) => arrivals.filter(({ atMs }) => atMs >= startMs && atMs <= endMs).length,
    );
    expect(
      probes.every((count) => count <= 1),
      `probes per half-open interval: ${probes.join(', ')}`,
    ).toBe(true);
    expect(probes.filter((count) => count === 1).length).toBeGreaterThanOrEqual(3);
    // Outside the half-open intervals, the server heard from nobody after the opening but the stragglers above.
    const outside = arrivals.filter(
      ({ atMs }) =>
        atMs > opened.atMs && !intervals.some(([startMs, endMs]) => atMs >= startMs && atMs <= endMs),
    );
    expect(outside.length).toBeLessThanOrEqual(reports.length);
    console.log(
      JSON.stringify({
        probes,
        outside: outside.length,
        arrivals: arrivals.length,
        refused: reports.map((r) => r.refused),
        sent: reports.map((r) => r.sentAtMs.length),
        transitions: transitions.length,
      }),
    );
    // Without sharing, each process would have probed on its own: the fleet refused far more than it sent.
    expect(reports.reduce((sum, report) => sum + report.refused, 0)).toBeGreaterThan(arrivals.length);
  } finally {
    await server.close();
  }
});
