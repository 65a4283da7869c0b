import { type ChildProcess, spawn } from 'node:child_process';

// A lifeline ends the programs this process started when this process dies in a way it cannot clean up after
// (SIGKILL, the OOM killer, a crash in native code). Node cannot ask the kernel for PR_SET_PDEATHSIG without a native
// addon, so a watchdog does it: a small shell process (/bin/sh, about 1 MB; no Node) in a session of its own, whose
// stdin is a pipe from this process. Started programs' process groups are written to it (`+pid`; `=pid` for a
// process alone; `-pid` when they end); when the pipe closes, which the kernel does whenever this process ends,
// however it ends, the watchdog kills every one still written to it (four rounds, for what forks meanwhile) and
// exits. One watchdog serves the whole process; it starts with the first program and never keeps this process alive.

/** The watchdog's program: shell builtins only (it runs with an empty environment). */
const WATCHDOG = `trap '' INT HUP PIPE
targets=' '
while IFS= read -r line; do
  case "$line" in
    +[0-9]*) targets="$targets-\${line#+} " ;;
    =[0-9]*) targets="$targets\${line#=} " ;;
    -[0-9]*)
      kept=' '
      for target in $targets; do
        if [ "$target" != "-\${line#-}" ] && [ "$target" != "\${line#-}" ]; then kept="$kept$target "; fi
      done
      targets=$kept ;;
  esac
done
for round in 1 2 3 4; do
  for target in $targets; do kill -s KILL -- "$target" 2>/dev/null; done
done`;

/** Where the watchdog's shell is. */
const SHELL = '/bin/sh';

let watchdog: ChildProcess | undefined;
let failed = false;

function write(line: string): void {
  if (failed || process.platform === 'win32') return;
  if (watchdog === undefined) {
    try {
      watchdog = spawn(SHELL, ['-c', WATCHDOG], {
        detached: true,
        stdio: ['pipe', 'ignore', 'ignore'],
        windowsHide: true,
        env: {},
      });
    } catch {
      failed = true;
      return;
    }
    watchdog.on('error', () => {
      failed = true;
    });
    watchdog.stdin?.on('error', () => {
      failed = true;
    });
    watchdog.unref();
    (watchdog.stdin as { unref?: () => void } | null)?.unref?.();
  }
  watchdog.stdin?.write(`${line}\n`);
}

/**
 * Ties a started program to this process's life: if this process dies without ending it (SIGKILL included), the
 * watchdog sends SIGKILL to the process group `pid` leads (`group: true`, the default: spawned `detached`), or to
 * `pid` alone. Call {@link releaseFromLifeline} when the program has ended, so that its pid, once reused, is safe.
 * Does nothing on Windows, or where /bin/sh cannot be started. The watchdog (one per process, a /bin/sh started on the
 * first call) runs in a session of its own, ignores SIGINT and SIGHUP, and never keeps this process alive.
 */
export function tieToLifeline(pid: number, options: { group?: boolean } = {}): void {
  if (!Number.isSafeInteger(pid) || pid <= 1) return;
  write(`${options.group === false ? '=' : '+'}${pid}`);
}

/** Forgets a program tied by {@link tieToLifeline}: it has ended. */
export function releaseFromLifeline(pid: number): void {
  if (watchdog === undefined || !Number.isSafeInteger(pid) || pid <= 1) return;
  write(`-${pid}`);
}

/** The watchdog's process id, once started (for tests). */
export function lifelinePid(): number | undefined {
  return watchdog?.pid;
}
