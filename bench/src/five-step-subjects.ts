// The two sides of the checkpoint benchmark's 5-step comparison, each made in a process of its own by
// measureIsolated (fair.ts): keel on a SQLite store, and LangGraph.js checkpointed by its SQLite saver. Each works in
// a temporary directory removed when its process ends.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteRunStore } from '@keel/store-sqlite';
import { keelRunner, type Runner } from './durable-runs.js';
import { langGraphRunner } from './langgraph-peer.js';

/** The length of the compared run. */
export const FIVE_STEPS = 5;

function temporaryDirectory(): string {
  const directory = mkdtempSync(join(tmpdir(), 'keel-bench-five-'));
  process.once('SIGTERM', () => process.exit(0));
  process.once('exit', () => rmSync(directory, { recursive: true, force: true }));
  return directory;
}

/** keel's 5-step durable run on SQLite (WAL, synchronous=NORMAL). */
export function keelFiveSteps(): Runner {
  return keelRunner(new SqliteRunStore(join(temporaryDirectory(), 'keel.db')), FIVE_STEPS, 0);
}

/** The same run in LangGraph.js with its SQLite saver (WAL, synchronous=NORMAL). */
export function langGraphFiveSteps(): Runner {
  const runner = langGraphRunner(join(temporaryDirectory(), 'langgraph.db'), FIVE_STEPS);
  return () => runner.run();
}
