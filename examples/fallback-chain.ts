// A fallback chain: when a model is down (after its retries, within the run's one retry budget), the run moves on to
// the next one, chosen by the error's class; a breaker per model stops calling one that keeps failing.
//   npm run build && node examples/dist/fallback-chain.js
import { fileURLToPath } from 'node:url';
import { agent, constant } from '@keel/core';
import { simulated } from '@keel/simulated';

/** Runs the example. */
export async function main() {
  // Offline: the first two models are overloaded on every request, the third answers.
  const primary = simulated({
    model: 'sim-primary',
    faults: 'sim-primary:overloaded=1,sim-second:overloaded=1',
  });
  // #region fallback-chain
  const assistant = agent({
    model: primary, // with hosted models: openai('gpt-4.1-mini', { env: process.env })
    fallbacks: [primary.withModel('sim-second'), primary.withModel('sim-third')], // anthropic(...), fromAiSdk(...)
    retry: {
      maxAttempts: 2, // calls per model and step, the first included (default 3)
      delay: constant(10), // between attempts (default: exponential from 500 ms, full jitter, at most 30 s)
    },
  });
  const result = await assistant.run('Say hello.');
  result.report.fallbacks.used; // [{ from: 'simulated/sim-primary', to: 'simulated/sim-second', errorCode: 'provider.overloaded', ... }, ...]
  result.report.requests.byModel; // every request each model received, retries included
  // #endregion
  await primary.close();
  return {
    status: result.status,
    fallbacks: result.report.fallbacks.used.map((used) => used.to),
    requests: result.report.requests,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await main());
