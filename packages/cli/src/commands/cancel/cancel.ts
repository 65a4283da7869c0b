import type { RunStore } from '@keel/core';
import type { Output } from '../../output/output.js';

/**
 * `keel cancel <run-id> [--reason TEXT] [--json]`: an interrupted or paused run is cancelled at once; a run in
 * progress in another process is asked to stop, and ends `cancelled` at its next checkpoint; a run that already
 * ended is left as it is. With `--json`, prints `{ runId, status }` (the run's status afterwards). With `--redis`
 * (a run in a fleet), the worker that holds a running run is also told through Redis, and aborts it at once.
 */
export async function cancelCommand(
  store: RunStore,
  runId: string,
  options: { reason?: string | undefined; json: boolean; redis?: string | undefined },
  output: Output,
): Promise<number> {
  const reason = options.reason ?? 'Cancelled with keel cancel';
  let status: Awaited<ReturnType<RunStore['requestCancellation']>>;
  if (options.redis === undefined) {
    status = await store.requestCancellation(runId, reason, Date.now());
  } else {
    const { runQueue } = await import('@keel/worker');
    const queue = runQueue({ store, redis: options.redis });
    try {
      status = await queue.cancel(runId, reason);
    } finally {
      await queue.close();
    }
  }
  if (options.json) output.out(JSON.stringify({ runId, status }, null, 2));
  else if (status === 'cancelled') output.out(`run ${runId} cancelled`);
  else if (status === 'running') {
    output.out(
      options.redis === undefined
        ? `run ${runId} is running: asked to stop at its next checkpoint`
        : `run ${runId} is running: its worker was told to stop it`,
    );
  } else output.out(`run ${runId} already ended ${status}: nothing to cancel`);
  return status === 'completed' || status === 'failed' ? 1 : 0;
}
