import { setImmediate } from 'node:timers';

/**
 * How long runs may keep the process busy with steps before they let the event loop turn, in milliseconds of real
 * time. A model or tool that answers at once (in-process, cached, scripted) never waits for I/O, so without a turn
 * no timer, run deadline or socket would be served until every such run had ended.
 */
export const BUSY_SLICE_MS = 1;

let sliceStartMs = performance.now();
let pendingTurn: Promise<void> | undefined;

function endTurn(resolve: () => void): void {
  pendingTurn = undefined;
  sliceStartMs = performance.now();
  resolve();
}

/**
 * Called between steps: `undefined` while the current slice lasts (about 60 ns: one clock read), else a promise that
 * resolves once the event loop has turned (timers, I/O, then `setImmediate`). Every run that reaches a step boundary
 * meanwhile waits for the same turn, since the loop turns only when no run is left running microtasks. Real time,
 * not the agent's clock: it is about the process, and a fake clock does not move the event loop. `setImmediate` is
 * taken from `node:timers`, so that a test that fakes the global timers does not hold its runs at the first turn.
 */
export function eventLoopTurn(): Promise<void> | undefined {
  if (pendingTurn !== undefined) return pendingTurn;
  if (performance.now() - sliceStartMs < BUSY_SLICE_MS) return undefined;
  pendingTurn = new Promise((resolve) => setImmediate(endTurn, resolve));
  return pendingTurn;
}
