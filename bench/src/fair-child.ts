// One subject of measureIsolated (fair.ts) in a process of its own: it imports `argv[2]`, makes its runner with the
// export named `argv[3]` (a factory returning `() => Promise<unknown>`, one unit of work), and then, for every
// `{ units }` message, runs that many units one after the other and answers with the CPU microseconds they took.
import { cpuUs } from './fair.js';

const [moduleUrl, exportName] = process.argv.slice(2);
const exports = (await import(moduleUrl!)) as Record<string, () => () => Promise<unknown>>;
const factory = exports[exportName!];
if (typeof factory !== 'function') throw new Error(`${moduleUrl} has no export ${exportName}`);
const unit = factory();

process.on('message', (message: { units: number }) => {
  cpuUs(async () => {
    for (let index = 0; index < message.units; index++) await unit();
  }).then(
    (used) => process.send!({ cpuUs: used }),
    (error: unknown) => process.send!({ error: String(error) }),
  );
});
process.send!({ ready: true });
