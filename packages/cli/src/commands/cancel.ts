import type { RunStore } from '@keel/core';
import type { Output } from '../output.js';

/**
 * `keel cancel <run-id> [--reason TEXT] [--json]`: an interrupted or paused run is cancelled at once; a run in
 * progress in another process is asked to stop, and ends `cancelled` at its next checkpoint; a run that already
 * ended is left as it is. With `--json`, prints `{ runId, status }` (the run's status afterwards).
 */
export async function cancelCommand(
  store: RunStore,
  runId: string,
  options: { reason?: string | undefined; json: boolean },
  output: Output,
): Promise<number> {
  const status = await store.requestCancellation(
    runId,
    options.reason ?? 'Cancelled with keel cancel',
    Date.now(),
  );
  if (options.json) output.out(JSON.stringify({ runId, status }, null, 2));
  else if (status === 'cancelled') output.out(`run ${runId} cancelled`);
  else if (status === 'running') output.out(`run ${runId} is running: asked to stop at its next checkpoint`);
  else output.out(`run ${runId} already ended ${status}: nothing to cancel`);
  return status === 'completed' || status === 'failed' ? 1 : 0;
}
