// Per-call timing for benchmarks of one store operation (bench:redis, bench:governance): cases take turns call by
// call, the order rotating, each call timed on its own; and the Redis round trips a call makes, counted from Redis's
// MONITOR feed (what the server received from clients, script internals left out).
import { Redis } from 'ioredis';

/** One measured operation. */
export interface Case {
  readonly label: string;
  readonly call: () => unknown;
}

/** Milliseconds the call took. */
export async function timed(call: () => unknown): Promise<number> {
  const started = process.hrtime.bigint();
  await call();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

/** Calls every case `calls` times, taking turns (the order rotates each turn); each case's durations, sorted. */
export async function takeTurns(cases: readonly Case[], calls: number): Promise<number[][]> {
  const times = cases.map(() => new Array<number>(calls));
  for (let turn = 0; turn < calls; turn++) {
    for (let offset = 0; offset < cases.length; offset++) {
      const index = (turn + offset) % cases.length;
      times[index]![turn] = await timed(cases[index]!.call);
    }
  }
  return times.map((values) => values.sort((left, right) => left - right));
}

/** Commands on keel's keys that Redis received from clients, per call of `call`, over `calls` calls. */
export async function roundTripsPerCall(url: string, call: () => unknown, calls: number): Promise<number> {
  const client = new Redis(url);
  const monitor = await client.monitor();
  let commands = 0;
  let markerSeen!: () => void;
  const marker = new Promise<void>((resolve) => (markerSeen = resolve));
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (source === 'lua') return;
    if (args[0]?.toLowerCase() === 'echo' && args[1] === 'bench:marker') return markerSeen();
    if (args.some((argument) => argument.startsWith('keel:bench:'))) commands++;
  });
  for (let index = 0; index < calls; index++) await call();
  const sender = new Redis(url);
  await sender.echo('bench:marker');
  await marker;
  monitor.disconnect();
  client.disconnect();
  sender.disconnect();
  return commands / calls;
}
