import type { RunStore } from '@keel/core';
import type { Output } from '../output.js';

/**
 * `keel cancel <run-id>`: an interrupted or paused run is cancelled at once; a run in progress in another process
 * is asked to stop, and ends `cancelled` at its next checkpoint; a run that already ended is left as it is.
 */
export async function cancelCommand(
  store: RunStore,
  runId: string,
  reason: string | undefined,
  output: Output,
): Promise<number> {
  const status = await store.requestCancellation(runId, reason ?? 'Cancelled with keel cancel', Date.now());
  if (status === 'cancelled') output.out(`run ${runId} cancelled`);
  else if (status === 'running') output.out(`run ${runId} is running: asked to stop at its next checkpoint`);
  else output.out(`run ${runId} already ended ${status}: nothing to cancel`);
  return status === 'completed' || status === 'failed' ? 1 : 0;
}
