// SqliteRunStore opened by real child processes: several at once on a new file (none may fail with "database is
// locked"), and by a user who may not write the file or its directory (a read-only store). The children run the
// built package (dist/), as the CLI does.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteRunStore } from './sqlite-run-store.js';

const STORE_URL = new URL('../dist/sqlite-run-store.js', import.meta.url).href;
const directory = mkdtempSync(join(tmpdir(), 'keel-sqlite-processes-'));
chmodSync(directory, 0o755);
afterAll(() => {
  chmodSync(directory, 0o755);
  for (const entry of readdirSync(directory)) chmodSync(join(directory, entry), 0o755);
  rmSync(directory, { recursive: true, force: true });
});

// Once stdin says go, opens the store at each path in turn (`a.db,b.db,...`), lists its runs, and prints one JSON
// line: the last store's runs, or the first failure.
const CHILD = `
const [url, paths, readOnly] = process.argv.slice(1);
const { SqliteRunStore } = await import(url);
await new Promise((resolve) => process.stdin.once('data', resolve));
process.stdin.destroy();
try {
  let runs = [];
  for (const path of paths.split(',')) {
    const store = new SqliteRunStore(path, readOnly === 'true' ? { readOnly: true } : {});
    runs = await store.listRuns();
    await store.close();
  }
  console.log(JSON.stringify({ runs: runs.map((run) => run.runId) }));
} catch (error) {
  console.log(JSON.stringify({ code: error.code, message: error.message }));
}
`;

/** Root ignores file modes: a read-only store is then tried by an unprivileged user (nobody). */
const UNPRIVILEGED = process.getuid?.() === 0 ? { uid: 65_534, gid: 65_534 } : {};

interface Child {
  go(): void;
  outcome: Promise<{ runs?: string[]; code?: string; message?: string }>;
}

function child(paths: string, options: { readOnly?: boolean; unprivileged?: boolean } = {}): Child {
  const started = spawn(
    process.execPath,
    ['--input-type=module', '-e', CHILD, STORE_URL, paths, String(options.readOnly === true)],
    { stdio: ['pipe', 'pipe', 'pipe'], ...(options.unprivileged === true ? UNPRIVILEGED : {}) },
  );
  let stdout = '';
  let stderr = '';
  started.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk;
  });
  started.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk;
  });
  const outcome = new Promise<{ runs?: string[]; code?: string; message?: string }>((resolve, reject) => {
    started.on('error', reject);
    started.on('close', (code) => {
      if (code !== 0 || stdout === '') reject(new Error(`child exited ${code}: ${stdout} ${stderr}`));
      else resolve(JSON.parse(stdout));
    });
  });
  return { go: () => started.stdin.end('go\n'), outcome };
}

async function storeWithRun(path: string): Promise<void> {
  const store = new SqliteRunStore(path);
  await store.createRun({
    runId: 'kept',
    agentName: 'a',
    status: 'completed',
    schemaVersion: 2,
    state: {},
    createdAtMs: 1,
  });
  await store.close();
}

describe('SqliteRunStore from several processes', () => {
  it('opens new files from 4 processes at once, never "database is locked"', async () => {
    expect(existsSync(fileURLToPath(STORE_URL)), 'build first (npx tsc -b tsconfig.build.json)').toBe(true);
    // Each process opens the same 300 new files in the same order: whoever comes first to a file creates it while
    // the others open it, so that opens collide on nearly every file.
    const paths = Array.from({ length: 300 }, (_, index) => join(directory, 'fresh', `${index}.db`)).join(
      ',',
    );
    const children = Array.from({ length: 4 }, () => child(paths));
    for (const started of children) started.go();
    const outcomes = await Promise.all(children.map((started) => started.outcome));
    expect(outcomes).toEqual(children.map(() => ({ runs: [] })));
  }, 60_000);
});

describe('a read-only store, opened by a user who may not write it', () => {
  it('lists the runs of a store whose directory is read-only', async () => {
    const storeDirectory = join(directory, 'read-only-directory');
    mkdirSync(storeDirectory);
    const path = join(storeDirectory, 'keel.db');
    await storeWithRun(path);
    chmodSync(path, 0o444);
    chmodSync(storeDirectory, 0o555);
    const reader = child(path, { readOnly: true, unprivileged: true });
    reader.go();
    expect(await reader.outcome).toEqual({ runs: ['kept'] });
    expect(readdirSync(storeDirectory)).toEqual(['keel.db']);
  });

  it('lists the runs of a store whose file is read-only', async () => {
    const storeDirectory = join(directory, 'read-only-file');
    mkdirSync(storeDirectory);
    const path = join(storeDirectory, 'keel.db');
    await storeWithRun(path);
    chmodSync(path, 0o444);
    chmodSync(storeDirectory, 0o777);
    const reader = child(path, { readOnly: true, unprivileged: true });
    reader.go();
    expect(await reader.outcome).toEqual({ runs: ['kept'] });
  });

  it('fails without readOnly, so the read-only mode is what makes it work', async () => {
    const storeDirectory = join(directory, 'read-only-directory');
    const reader = child(join(storeDirectory, 'keel.db'), { unprivileged: true });
    reader.go();
    expect(await reader.outcome).toMatchObject({ code: expect.stringMatching(/^store\./) });
  });
});
