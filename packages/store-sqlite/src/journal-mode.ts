import type Database from 'better-sqlite3';

const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/**
 * Puts the database in WAL mode. Changing the journal mode fails at once with SQLITE_BUSY, without calling the busy
 * handler, while another connection holds a write lock: the first process to open a new file holds one while it
 * switches that file to WAL, so a second process opening the file at the same moment would fail with "database is
 * locked". The switch is retried, with pauses of 1, 2, 4 ... 50 ms, until `busyTimeoutMs` has passed. A file already
 * in WAL mode is left alone.
 */
export function switchToWal(database: Database.Database, busyTimeoutMs: number): void {
  const deadlineMs = Date.now() + busyTimeoutMs;
  for (let pauseMs = 1; ; pauseMs = Math.min(2 * pauseMs, 50)) {
    try {
      if (database.pragma('journal_mode', { simple: true }) !== 'wal') database.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      const code = String((error as { code?: unknown }).code ?? '');
      if (!code.startsWith('SQLITE_BUSY') || Date.now() >= deadlineMs) throw error;
      // The constructor is synchronous (as better-sqlite3's own busy wait is): pause the thread, not the loop.
      Atomics.wait(PAUSE, 0, 0, Math.min(pauseMs, Math.max(1, deadlineMs - Date.now())));
    }
  }
}
