// Any Vercel AI SDK model as a keel model: `fromAiSdk` calls it directly (not through generateText), so keel's
// retries, breaker and fallbacks are the only ones. Here @ai-sdk/openai talks to the simulated provider's
// OpenAI-compatible server on 127.0.0.1, which sends one 503 first (retried by keel).
//   npm run build && node examples/dist/ai-sdk-model.js
import { fileURLToPath } from 'node:url';
import { createOpenAI } from '@ai-sdk/openai';
import { fromAiSdk } from '@keel/ai-sdk';
import { agent, constant } from '@keel/core';
import { startSimulatedServer } from '@keel/simulated';

/** Runs the example. */
export async function main() {
  const server = await startSimulatedServer({
    faults: { sequence: ['unavailable'] },
    keepProcessAlive: false,
  });
  try {
    // #region ai-sdk-model
    // Any AI SDK provider: createAnthropic, createGoogleGenerativeAI, createAzure, ...
    const openai = createOpenAI({ baseURL: server.url, apiKey: 'offline' }); // apiKey: process.env.OPENAI_API_KEY
    const assistant = agent({
      model: fromAiSdk(openai.chat('sim-primary')),
      fallbacks: [fromAiSdk(openai.chat('sim-fallback'))],
      retry: { delay: constant(50) },
    });
    const result = await assistant.run('Say hello.');
    result.report.retries.model; // 1: the 503, retried by keel (the AI SDK's own retries are not in the way)
    // #endregion
    return { status: result.status, retries: result.report.retries.model, requests: server.requests.length };
  } finally {
    await server.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await main());
