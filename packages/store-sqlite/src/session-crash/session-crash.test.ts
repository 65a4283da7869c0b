// A session across real processes: each message of a conversation runs in a child process on one SQLite file; one of
// them is killed (SIGKILL) in the middle of its run. The session holds the completed turns only; a later process
// resumes the killed run, which then appends its turns, and the conversation goes on from there.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeClock, SESSION_START_MS, SessionFixture } from '@keel/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteRunStore } from '../sqlite-run-store.js';

const CHILD_PATH = fileURLToPath(new URL('../../dist/session-crash/session-child.js', import.meta.url));
const directory = mkdtempSync(join(tmpdir(), 'keel-session-crash-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

interface Child {
  process: ChildProcess;
  /** The JSON lines printed so far. */
  lines: Array<Record<string, unknown>>;
  /** Resolves once a line of `type` is printed. */
  line(type: string): Promise<Record<string, unknown>>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

function child(...args: string[]): Child {
  const spawned = spawn(process.execPath, [CHILD_PATH, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Array<Record<string, unknown>> = [];
  const waiting: Array<{ type: string; resolve: (line: Record<string, unknown>) => void }> = [];
  let buffered = '';
  let stderr = '';
  spawned.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let end = buffered.indexOf('\n'); end !== -1; end = buffered.indexOf('\n')) {
      const line = JSON.parse(buffered.slice(0, end)) as Record<string, unknown>;
      buffered = buffered.slice(end + 1);
      lines.push(line);
      for (const waiter of waiting.filter((entry) => entry.type === line.type)) waiter.resolve(line);
    }
  });
  spawned.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  return {
    process: spawned,
    lines,
    line: (type) =>
      new Promise((resolve) => {
        const found = lines.find((line) => line.type === type);
        if (found !== undefined) resolve(found);
        else waiting.push({ type, resolve });
      }),
    exited: new Promise((resolve) =>
      spawned.on('close', (code, signal) => resolve({ code, signal, stderr })),
    ),
  };
}

describe('a session across processes, one killed in the middle of a run', () => {
  it('keeps the completed turns only, and appends the killed run once a later process resumes it', async () => {
    expect(existsSync(CHILD_PATH), `build first (npx tsc -b tsconfig.build.json): ${CHILD_PATH}`).toBe(true);
    const database = join(directory, 'keel.db');
    const first = child(database, 'talk', 'run-1', 'I am Ana');
    expect(await first.line('result')).toMatchObject({
      status: 'completed',
      session: { outcome: 'saved', version: 1 },
    });
    expect((await first.exited).code).toBe(0);

    const killed = child(database, 'talk', 'run-2', 'weather Oslo', 'Oslo');
    await killed.line('tool-started');
    killed.process.kill('SIGKILL');
    expect((await killed.exited).signal).toBe('SIGKILL');

    const store = new SqliteRunStore(database);
    try {
      const session = await store.loadSession('talk');
      expect(session).toMatchObject({ version: 1, messageCount: 2, activeRunId: 'run-2' });
      expect(session?.turns.map((turn) => turn.runId)).toEqual(['run-1']);
      expect((await store.loadRun('run-2'))?.status).toBe('running');

      // A later process, once the dead owner's lease has expired on its clock.
      const fixture = new SessionFixture();
      const later = fixture.agent(store, { owner: 'later', clock: new FakeClock(SESSION_START_MS + 60_000) });
      const refused = await later.run('recall', { sessionId: 'talk' }).catch((error: unknown) => error);
      expect(refused).toMatchObject({ code: 'store.conflict', data: { activeRunId: 'run-2' } });
      const resumed = await later.resume('run-2');
      expect(resumed).toMatchObject({ status: 'completed', session: { outcome: 'saved', version: 2 } });
      expect(fixture.executions).toEqual(['run-2:1:0']);
      const recalled = await later.run('recall', { sessionId: 'talk' });
      expect(recalled.output).toBe('you said: I am Ana | weather Oslo');
      expect((await store.loadSession('talk'))?.turns.map((turn) => turn.messages.length)).toEqual([2, 4, 2]);
    } finally {
      await store.close();
    }
  });
});
