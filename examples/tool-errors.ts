// How a tool's failure reaches the model: as data, classified once. A plain `Error` thrown by a tool is
// `tool.failed`, not retryable: it is not retried, and the model is told what failed; a tool's `fallbacks` answer it
// (every failure by default), and the model is told the answer is degraded.
//   npm run build && node examples/dist/tool-errors.js
import { fileURLToPath } from 'node:url';
import { agent, tool } from '@keel/core';
import { simulated } from '@keel/simulated';
import { z } from 'zod';

/** Runs the example. */
export async function main() {
  const model = simulated();
  let calls = 0;
  // #region tool-errors
  const flaky = tool({
    name: 'get_weather',
    description: 'Current weather for a city',
    input: z.object({ city: z.string() }),
    async execute() {
      calls++;
      throw new Error('weather service: 503'); // a plain Error: tool.failed, not retried (no status, no known code)
    },
  });
  const plain = await agent({ model, tools: [flaky] }).run('Weather in Paris?');
  plain.report.toolCalls.errorsByCode; // { 'tool.failed': 1 }: the model saw { status: 'error', error, guidance }

  const withFallback = tool({
    name: 'get_weather',
    description: 'Current weather for a city',
    input: z.object({ city: z.string() }),
    async execute() {
      throw new Error('weather service: 503');
    },
    // Answers every failure by default; `on: ['tool.unavailable', 'network']` narrows it.
    fallbacks: [{ value: ({ city }) => ({ city, temperatureC: 17 }), reason: 'yesterday’s forecast' }],
  });
  const degraded = await agent({ model, tools: [withFallback] }).run('Weather in Paris?');
  degraded.report.degradations; // { total: 1, byTool: { get_weather: 1 } }: the model was told the answer is degraded
  // #endregion
  await model.close();
  return {
    calls,
    plain: plain.report.toolCalls.errorsByCode,
    toolRetries: plain.report.retries.tool,
    degradations: degraded.report.degradations,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await main());
