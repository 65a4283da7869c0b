// The per-chunk cost of streaming an answer: keel's agent.stream() (its parts, and its textStream) against keel's own
// onTextDelta callback, and against the AI SDK's streamText (@ai-sdk/openai), every subject reading the same answer
// from the same local server: an OpenAI-compatible SSE server in a child process on 127.0.0.1 (so that its CPU is
// not counted), answering each request with CHUNKS text chunks.
//
// Method: each round runs every subject for REQUESTS requests, in an order that rotates from round to round; a
// subject's figure is its median over the rounds of CPU time (user + system, this process) per chunk. No forced GC
// in timed blocks (the collector's work is part of the cost). The load average is printed before and after: the
// machine is shared, so read the figures against it.
// Run: npm run bench:stream
import { fork } from 'node:child_process';
import { loadavg } from 'node:os';
import { createOpenAI } from '@ai-sdk/openai';
import { agent } from '@keel/core';
import { openaiCompatible } from '@keel/openai';
import { streamText } from 'ai';

const CHUNKS = 2_000;
const REQUESTS = 4;
const ROUNDS = 9;

// The server, as plain JavaScript run by a child node: one body, built once, written at once.
const SERVER = `
const { createServer } = require('node:http');
const chunks = Number(process.argv[1]);
const events = [];
events.push('data: ' + JSON.stringify({ id: 'c', model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }) + '\\n\\n');
for (let index = 0; index < chunks; index++)
  events.push('data: ' + JSON.stringify({ id: 'c', model: 'm', choices: [{ index: 0, delta: { content: 'tok' + (index % 10) + ' ' }, finish_reason: null }] }) + '\\n\\n');
events.push('data: ' + JSON.stringify({ id: 'c', model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) + '\\n\\n');
events.push('data: ' + JSON.stringify({ id: 'c', model: 'm', choices: [], usage: { prompt_tokens: 5, completion_tokens: chunks } }) + '\\n\\n');
events.push('data: [DONE]\\n\\n');
const body = events.join('');
const server = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    response.end(body);
  });
});
server.listen(0, '127.0.0.1', () => process.send(server.address().port));
`;

const child = fork('-e', [SERVER, String(CHUNKS)], {
  execArgv: [],
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
const port = await new Promise<number>((resolve) =>
  child.once('message', (message) => resolve(Number(message))),
);
const baseUrl = `http://127.0.0.1:${port}/v1`;

const keelModel = openaiCompatible({ baseUrl, model: 'm' });
const keelAgent = agent({ model: keelModel });
const aiSdkModel = createOpenAI({ baseURL: baseUrl, apiKey: 'local' }).chat('m');

/** Each subject answers one request and returns how many chunks it read. */
const subjects: Record<string, () => Promise<number>> = {
  'keel run + onTextDelta': async () => {
    let chunks = 0;
    const result = await keelAgent.run('Go', {
      onTextDelta: () => {
        chunks++;
      },
    });
    if (result.status !== 'completed') throw new Error(`keel run ${result.status}`);
    return chunks;
  },
  'keel agent.stream() parts': async () => {
    let chunks = 0;
    const stream = keelAgent.stream('Go');
    for await (const part of stream) if (part.type === 'text-delta') chunks++;
    if ((await stream.result).status !== 'completed') throw new Error('keel stream failed');
    return chunks;
  },
  'keel agent.stream().textStream': async () => {
    let chunks = 0;
    const stream = keelAgent.stream('Go');
    for await (const _delta of stream.textStream) chunks++;
    if ((await stream.result).status !== 'completed') throw new Error('keel stream failed');
    return chunks;
  },
  'AI SDK streamText().textStream': async () => {
    let chunks = 0;
    const result = streamText({ model: aiSdkModel, prompt: 'Go', maxRetries: 0 });
    for await (const _delta of result.textStream) chunks++;
    await result.finishReason;
    return chunks;
  },
};
const names = Object.keys(subjects);

async function measure(name: string): Promise<number> {
  const start = process.cpuUsage();
  let chunks = 0;
  for (let request = 0; request < REQUESTS; request++) chunks += await subjects[name]!();
  const used = process.cpuUsage(start);
  if (chunks < REQUESTS * CHUNKS * 0.99) throw new Error(`${name} read ${chunks} chunks`);
  return (used.user + used.system) / chunks;
}

console.log(
  `load average before: ${loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')}`,
);
console.log(`${CHUNKS} chunks per answer, ${REQUESTS} answers per subject per round, ${ROUNDS} rounds\n`);
for (const name of names) await measure(name); // warm-up, untimed
const samples = new Map<string, number[]>(names.map((name) => [name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (let offset = 0; offset < names.length; offset++) {
    const name = names[(round + offset) % names.length]!;
    samples.get(name)!.push(await measure(name));
  }
}
child.kill();

const medianUs = (values: number[]): number =>
  [...values].sort((left, right) => left - right)[values.length >> 1]!;
const figures = new Map(names.map((name) => [name, medianUs(samples.get(name)!)]));
for (const [name, us] of figures) {
  const sorted = [...samples.get(name)!].sort((left, right) => left - right);
  console.log(
    `${name.padEnd(32)} ${us.toFixed(2).padStart(6)} µs CPU per chunk  (min ${sorted[0]!.toFixed(2)}, max ${sorted.at(-1)!.toFixed(2)})`,
  );
}
const callback = figures.get('keel run + onTextDelta')!;
const parts = figures.get('keel agent.stream() parts')!;
const text = figures.get('keel agent.stream().textStream')!;
const aiSdk = figures.get('AI SDK streamText().textStream')!;
console.log(`\nagent.stream() parts over onTextDelta: ${(parts - callback).toFixed(2)} µs per chunk`);
console.log(`agent.stream().textStream over onTextDelta: ${(text - callback).toFixed(2)} µs per chunk`);
console.log(
  `load average after: ${loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')}`,
);
const pass = parts <= aiSdk && text <= aiSdk;
console.log(
  `${pass ? 'PASS' : 'FAIL'}  keel agent.stream() per chunk <= AI SDK streamText per chunk: parts ${parts.toFixed(2)} µs, textStream ${text.toFixed(2)} µs, AI SDK ${aiSdk.toFixed(2)} µs`,
);
