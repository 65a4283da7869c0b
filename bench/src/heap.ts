// Whether a long series of calls leaves anything behind: the heap after a full collection, before and after.

/** The heap used at each checkpoint of a series of calls, after a full collection. */
export interface HeapSeries {
  readonly label: string;
  readonly calls: number;
  /** `[callsMade, heapUsedBytes]`, the first at 0 calls. */
  readonly points: ReadonlyArray<readonly [number, number]>;
  /** Heap used after the last call minus before the first, in bytes. */
  readonly growthBytes: number;
}

async function heapAfterCollection(collectGarbage: () => void): Promise<number> {
  // Back to the event loop first: objects held for the current job (WeakRef targets) and pending finalisers are let
  // go only there. Then two passes: the first may only queue finalisers or move survivors, the second settles it.
  await new Promise((resolve) => setImmediate(resolve));
  collectGarbage();
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

/**
 * Calls `run` `calls` times (sequential awaits), reading the heap after a full collection before the first call and
 * after every `calls / checkpoints` calls. The caller warms `run` first, so that compiled code is not counted.
 */
export async function heapSeries(
  label: string,
  run: () => Promise<unknown>,
  calls: number,
  checkpoints: number,
  collectGarbage: () => void,
): Promise<HeapSeries> {
  const points: Array<readonly [number, number]> = [[0, await heapAfterCollection(collectGarbage)]];
  const perCheckpoint = Math.ceil(calls / checkpoints);
  let made = 0;
  while (made < calls) {
    const batch = Math.min(perCheckpoint, calls - made);
    for (let index = 0; index < batch; index++) await run();
    made += batch;
    points.push([made, await heapAfterCollection(collectGarbage)]);
  }
  return { label, calls, points, growthBytes: points.at(-1)![1] - points[0]![1] };
}
