// keel's side of the checkpoint benchmark's 5-step comparison, made in a process of its own by measureIsolated
// (fair.ts); LangGraph's side is `langGraphFiveSteps` in langgraph-peer.ts. This module imports nothing of LangGraph:
// a library's modules may set up process-wide state of their own (LangChain's context propagation, for one), which
// keel's process must not carry. Each side works in a temporary directory removed when its process ends.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteRunStore } from '@keel/store-sqlite';
import { keelRunner, type Runner } from './durable-runs.js';

/** The length of the compared run. */
export const FIVE_STEPS = 5;

/** A temporary directory, removed when the process ends (or is told to end). */
export function temporaryDirectory(): string {
  const directory = mkdtempSync(join(tmpdir(), 'keel-bench-five-'));
  process.once('SIGTERM', () => process.exit(0));
  process.once('exit', () => rmSync(directory, { recursive: true, force: true }));
  return directory;
}

/** keel's 5-step durable run on SQLite (WAL, synchronous=NORMAL). */
export function keelFiveSteps(): Runner {
  return keelRunner(new SqliteRunStore(join(temporaryDirectory(), 'keel.db')), FIVE_STEPS, 0);
}
