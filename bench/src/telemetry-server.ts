// The model server of bench:telemetry in a process of its own: a user's process does not run the model, so the
// server's CPU time (parsing requests, writing replies) must not count in the baseline the telemetry cost is divided
// by. Started by telemetry.ts with fork(); sends `{ url }` once listening and closes on any message.
import { type Brain, startSimulatedServer } from '@keel/simulated';

/** Steps of each run: a `lookup` call per step until the last, then the answer. */
const STEPS_PER_RUN = Number(process.argv[2] ?? 10);

const stepBrain: Brain = (request) => {
  const toolResults = request.messages.filter((message) => message.role === 'tool').length;
  return toolResults >= STEPS_PER_RUN - 1
    ? { content: 'done' }
    : { toolCalls: [{ name: 'lookup', arguments: { key: `k${toolResults}` } }] };
};

const server = await startSimulatedServer({ brain: stepBrain, models: { steps: {} } });
process.send!({ url: server.url });
process.once('message', () => {
  server.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
