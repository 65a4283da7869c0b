// Outage windows by wall time (on a fake clock), requests counted while a model is down, request times, prompt sizes,
// and hangs cut after `hangMs`, over real HTTP.
import { FakeClock } from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { serverPool } from './agent-http-fixture.js';
import { outageAt, validateOutages } from './outages.js';
import { faultsForModel, parseFaults } from './parse-faults.js';
import type { SimulatedServer } from './server.js';

const servers = serverPool();
afterEach(servers.closeAll);

function chat(server: SimulatedServer, model: string): Promise<Response> {
  return fetch(`${server.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'What is the weather in Paris?' }] }),
  });
}

describe('outage windows', () => {
  it('answers every request for a down model with the window fault, only inside the window', async () => {
    const clock = new FakeClock();
    const server = await servers.start({
      clock,
      models: {
        'sim-primary': { outages: [{ startMs: 1_000, endMs: 3_000 }] },
        'sim-storm': {
          outages: [{ startMs: 0, endMs: 500, fault: 'rate_limit' }],
          faults: 'retry_after_ms=250',
        },
      },
    });
    expect(server.epochMs).toBe(clock.now());
    const statuses: (number | string)[] = [];
    const at = async (elapsedMs: number, model: string) => {
      await clock.advance(elapsedMs - (clock.now() - server.epochMs));
      const response = await chat(server, model);
      statuses.push(response.status);
      if (response.status === 429) statuses.push(String(response.headers.get('retry-after-ms')));
      await response.arrayBuffer();
    };
    await at(0, 'sim-storm');
    await at(999, 'sim-primary');
    await at(1_000, 'sim-primary');
    await at(2_999, 'sim-primary');
    await at(3_000, 'sim-primary');
    await at(3_000, 'sim-storm');
    expect(statuses).toEqual([429, '250', 200, 503, 503, 200, 200]);
    expect(server.requests.map((record) => [record.model, record.down, record.fault])).toEqual([
      ['sim-storm', true, 'rate_limit'],
      ['sim-primary', false, 'none'],
      ['sim-primary', true, 'unavailable'],
      ['sim-primary', true, 'unavailable'],
      ['sim-primary', false, 'none'],
      ['sim-storm', false, 'none'],
    ]);
    expect(server.requests.map((record) => record.receivedAtMs - server.epochMs)).toEqual([
      0, 999, 1_000, 2_999, 3_000, 3_000,
    ]);
  });

  it('counts from epochMs when given, and windows replace the schedule only while they last', async () => {
    const clock = new FakeClock();
    const server = await servers.start({
      clock,
      epochMs: clock.now() - 1_000,
      faults: { sequence: ['server_error', 'server_error'] },
      models: { 'sim-primary': { outages: [{ startMs: 0, endMs: 1_500, fault: 'overloaded' }] } },
    });
    const statuses: number[] = [];
    for (const advanceMs of [0, 500, 0]) {
      await clock.advance(advanceMs);
      const response = await chat(server, 'sim-primary');
      await response.arrayBuffer();
      statuses.push(response.status);
    }
    // 1 s after the epoch the window holds; at 1.5 s it is over. The window took the schedule's first position (a
    // server_error), so the second request reads the second position and the third runs past the sequence.
    expect(statuses).toEqual([529, 500, 200]);
    expect(server.requests.map((record) => record.scheduled)).toEqual(['overloaded', 'server_error', 'none']);
  });

  it('records when each exchange ended and how large its prompt was', async () => {
    const clock = new FakeClock();
    const server = await servers.start({ clock });
    const response = await chat(server, 'sim-primary');
    await response.arrayBuffer();
    const [record] = server.requests;
    expect(record!.promptTokens).toBe(4 + Math.ceil('What is the weather in Paris?'.length / 4));
    await expect.poll(() => record!.endedAtMs).toBe(clock.now());
  });

  it('rejects windows that are not windows, naming the field', async () => {
    await expect(servers.start({ models: { m: { outages: [{ startMs: 5, endMs: 5 }] } } })).rejects.toThrow(
      /models\.m\.outages\[0\]\.endMs must be a number of milliseconds after startMs/,
    );
    await expect(servers.start({ models: { m: { outages: [{ startMs: -1, endMs: 5 }] } } })).rejects.toThrow(
      /startMs must be a number of milliseconds >= 0/,
    );
    expect(() => validateOutages([{ startMs: 0, endMs: 1, fault: 'none' }], 'w')).toThrow(
      /w\[0\]\.fault must be a fault kind other than none/,
    );
    expect(() => validateOutages([{ startMs: 0, endMs: 1, until: 3 }], 'w')).toThrow(
      /Unknown w\[0\] option until/,
    );
    expect(() => validateOutages('soon', 'w')).toThrow(/w must be an array/);
    await expect(servers.start({ epochMs: Number.NaN })).rejects.toThrow(/epochMs must be a number/);
  });

  it('outageAt is half open: start inclusive, end exclusive', () => {
    const windows = [
      { startMs: 10, endMs: 20, fault: 'hang' as const },
      { startMs: 30, endMs: 40 },
    ];
    expect([9, 10, 19, 20, 30, 39, 40].map((elapsed) => outageAt(windows, elapsed))).toEqual([
      undefined,
      'hang',
      'hang',
      undefined,
      'unavailable',
      'unavailable',
      undefined,
    ]);
  });
});

describe('hangMs', () => {
  it('cuts a hanging request after hangMs without sending a byte', async () => {
    const clock = new FakeClock();
    let hanging!: () => void;
    const started = new Promise<void>((resolve) => {
      hanging = resolve;
    });
    const server = await servers.start({
      clock,
      faults: { sequence: ['hang'], hangMs: 2_000 },
      onRequest: (record) => {
        if (record.fault === 'hang') hanging();
      },
    });
    const outcome = chat(server, 'sim-primary').then(
      () => 'answered',
      (error: Error) => (error.cause as NodeJS.ErrnoException | undefined)?.code ?? error.message,
    );
    await started;
    await clock.advance(1_999);
    expect(server.requests[0]!.endedAtMs).toBeUndefined();
    await clock.advance(1);
    expect(await outcome).toMatch(/ECONNRESET|UND_ERR_SOCKET|other side closed/);
    expect(server.requests[0]).toMatchObject({ fault: 'hang', status: undefined });
  });

  it('is read from fault strings as hang_ms and inherited by models with schedules of their own', () => {
    const faults = parseFaults('hang=0.1,hang_ms=1500,sim-fallback:reset=0.2');
    expect(faults.default).toEqual({ rates: { hang: 0.1 }, hangMs: 1_500 });
    expect(faultsForModel(faults, 'sim-fallback')).toMatchObject({ rates: { reset: 0.2 }, hangMs: 1_500 });
    expect(() => parseFaults('hang_ms=soon')).toThrow(/hang_ms must be a number of milliseconds/);
  });
});
