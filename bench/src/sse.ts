// The cost of reading server-sent events as a function of the input: one long data line (4, 32 and 40 MB) arriving in
// 64 KB chunks, as a hosted model's stream would deliver a huge event, and the same bytes as many short events.
// Linear reading costs 8x for 8x the input (4 MB to 32 MB); the reader this replaced scanned its whole buffer again
// on every chunk (measured: 1 MB 50 ms, 4 MB 538 ms, 8 MB 2,039 ms of CPU; 40 MB about 52 s).
// Run: npm run bench:sse
import { readServerSentEvents } from '@keel/core/http';
import { printLoadAround } from './fair.js';

printLoadAround();

const CHUNK_BYTES = 65_536;
const ROUNDS = 3;
const MIB = 1_048_576;
/** Most the 32 MB line may cost over the 4 MB line: 8 is linear, the quadratic reader gave ~64. */
const MAX_RATIO = 16;
/** Most one 40 MB line may cost, in milliseconds of CPU. */
const MAX_40_MB_MS = 2_000;

function body(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) {
        controller.close();
        return;
      }
      controller.enqueue(bytes.subarray(offset, offset + CHUNK_BYTES));
      offset += CHUNK_BYTES;
    },
  });
}

/** Median CPU milliseconds (user + system) to read `text` to the end, over {@link ROUNDS} rounds. */
async function cpuMs(text: string): Promise<number> {
  const bytes = new TextEncoder().encode(text);
  const samples: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.cpuUsage();
    let characters = 0;
    for await (const event of readServerSentEvents(body(bytes))) characters += event.data.length;
    const used = process.cpuUsage(start);
    if (characters === 0) throw new Error('no event read');
    samples.push((used.user + used.system) / 1000);
  }
  return samples.sort((left, right) => left - right)[Math.floor(ROUNDS / 2)]!;
}

const oneLine = (sizeBytes: number): string => `data: ${'x'.repeat(sizeBytes)}\n\n`;
const shortEvents = (sizeBytes: number): string =>
  'data: {"choices":[{"delta":{"content":"token"}}]}\n\n'.repeat(Math.ceil(sizeBytes / 52));

await cpuMs(oneLine(4 * MIB)); // warm-up
const results = new Map<string, number>();
for (const megabytes of [4, 32, 40]) {
  results.set(`one ${megabytes} MB line`, await cpuMs(oneLine(megabytes * MIB)));
}
results.set('8 MB of 52-byte events', await cpuMs(shortEvents(8 * MIB)));
for (const [label, ms] of results) console.log(`${label.padEnd(24)} ${ms.toFixed(0).padStart(6)} ms CPU`);

const ratio = results.get('one 32 MB line')! / results.get('one 4 MB line')!;
const fortyMs = results.get('one 40 MB line')!;
const targets = [
  {
    target: `32 MB line / 4 MB line <= ${MAX_RATIO}x`,
    pass: ratio <= MAX_RATIO,
    figures: `${ratio.toFixed(1)}x`,
  },
  {
    target: `40 MB line <= ${MAX_40_MB_MS} ms CPU`,
    pass: fortyMs <= MAX_40_MB_MS,
    figures: `${fortyMs.toFixed(0)} ms`,
  },
];
for (const { target, pass, figures } of targets)
  console.log(`${pass ? 'PASS' : 'FAIL'}  ${target}: ${figures}`);
console.log(`${targets.filter((target) => target.pass).length} of ${targets.length} targets met`);
