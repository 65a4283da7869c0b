// An agent streamed to a web page: agent.stream() read part by part, then served as the AI SDK's UI message stream
// (what useChat reads) from a node:http server, with a tiny page that shows the answer as it arrives. Offline, on the
// simulated provider; main() fetches the stream once as the page would, reads it back with the AI SDK's client, and
// closes the server:
//   npm run build && node examples/dist/stream-to-web-page.js
//   npm run build && node examples/dist/stream-to-web-page.js --serve    (PORT=3000 by default; open the address it prints)
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { toUIMessageStreamResponse } from '@keel/ai-sdk';
import { agent, MemoryRunStore, type RunStatus, tool } from '@keel/core';
import { simulated } from '@keel/simulated';
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from 'ai';
import { z } from 'zod';

const model = simulated({ faults: 'none' });
const weather = tool({
  name: 'get_weather',
  description: 'Current weather for a city',
  input: z.object({ city: z.string() }),
  idempotent: true,
  execute: ({ city }) => ({ city, temperatureC: 18, sky: 'sunny' }),
});
const assistant = agent({ model, tools: [weather], store: new MemoryRunStore() });

/** The page: a question box, and the answer as the stream brings it (no build step, no framework). */
const PAGE = `<!doctype html><meta charset="utf-8"><title>keel</title>
<form><input name="q" value="Weather in Paris?" size="40"><button>Ask</button></form><pre id="answer"></pre>
<script type="module">
document.querySelector('form').onsubmit = async (event) => {
  event.preventDefault();
  const text = new FormData(event.target).get('q');
  const answer = document.querySelector('#answer');
  answer.textContent = '';
  const response = await fetch('/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text }] }] }) });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    const events = buffer.split('\\n\\n');
    buffer = events.pop();
    for (const event of events) {
      const data = event.replace(/^data: /, '');
      if (data === '[DONE]') continue;
      const chunk = JSON.parse(data);
      if (chunk.type === 'text-delta') answer.textContent += chunk.delta;
      if (chunk.type === 'tool-input-available') answer.textContent += '(calling ' + chunk.toolName + ')\\n';
    }
  }
};
</script>`;

/** Serves the page on GET / and the agent's UI message stream on POST /api/chat; resolves once it listens. */
export async function serve(port = 0): Promise<{ server: Server; url: string }> {
  const server = createServer(async (request, response) => {
    if (request.method !== 'POST') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
      return;
    }
    let body = '';
    for await (const piece of request) body += piece;
    const { messages } = JSON.parse(body) as { messages: UIMessage[] };
    const text = (messages.at(-1)?.parts ?? [])
      .map((part) => (part.type === 'text' ? part.text : ''))
      .join('');
    const controller = new AbortController(); // the client going away cancels the run
    response.on('close', () => {
      if (!response.writableFinished) controller.abort();
    });
    // What a route handler returns (a Next.js route: `return toUIMessageStreamResponse(...)`); node:http writes it.
    const web = toUIMessageStreamResponse(assistant.stream(text, { signal: controller.signal }));
    response.writeHead(web.status, Object.fromEntries(web.headers));
    if (web.body !== null) for await (const bytes of web.body) response.write(bytes);
    response.end();
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Streams one answer to the console, then serves it once to the AI SDK's client (what useChat uses). */
export async function main(): Promise<{
  status: RunStatus;
  output: string;
  streamed: string;
  byTool: Record<string, number>;
  page: boolean;
  webText: string;
  webFinished: boolean;
}> {
  // #region streaming
  const stream = assistant.stream('Weather in Paris?', { sessionId: 'user-42' });
  const answerByStep = new Map<number, string>(); // the text shown, by step
  for await (const part of stream) {
    if (part.type === 'text-delta') {
      answerByStep.set(part.step, (answerByStep.get(part.step) ?? '') + part.delta);
      process.stdout.write(part.delta);
    } else if (part.type === 'tool-call-start') {
      console.log(`\ncalling ${part.toolName}`);
    } else if (part.type === 'recovery' && part.mode === 'restarted') {
      answerByStep.delete(part.step); // what was shown of this step is void: the step's answer comes again
    }
  }
  const result = await stream.result; // the RunResult run() would have given
  // or: for await (const text of stream.textStream) ...;  stream.toReadableStream() for a web ReadableStream
  // #endregion
  process.stdout.write('\n');

  const { server, url } = await serve();
  try {
    const page = await (await fetch(url)).text();
    // The AI SDK's chat transport posts the messages and parses the server-sent events into UI message chunks.
    const transport = new DefaultChatTransport<UIMessage>({ api: `${url}/api/chat` });
    const chunks = await transport.sendMessages({
      trigger: 'submit-message',
      chatId: 'chat-1',
      messageId: undefined,
      messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Weather in Paris?' }] }],
      abortSignal: undefined,
    });
    let webFinished = false;
    const seen = chunks.pipeThrough(
      new TransformStream({
        transform(chunk, controller) {
          if (chunk.type === 'finish') webFinished = true;
          controller.enqueue(chunk);
        },
      }),
    );
    let message: UIMessage | undefined;
    for await (const snapshot of readUIMessageStream({ stream: seen })) message = snapshot;
    const texts = (message?.parts ?? []).flatMap((part) => (part.type === 'text' ? [part.text] : []));
    return {
      status: result.status,
      output: String(result.output),
      streamed: [...answerByStep.values()].at(-1) ?? '',
      byTool: result.report.toolCalls.byTool,
      page: page.includes('/api/chat'),
      webText: texts.at(-1) ?? '',
      webFinished,
    };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await model.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--serve'))
    console.log(`open ${(await serve(Number(process.env.PORT ?? 3000))).url}`);
  else console.log(JSON.stringify(await main(), null, 2));
}
