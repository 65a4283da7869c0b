// Small formatting helpers shared by the pages.

/** `1.2 s`, `340 ms`, `3 min 5 s`. */
export function formatDuration(milliseconds) {
  if (milliseconds === undefined || milliseconds === null) return '–';
  if (milliseconds < 1_000) return `${Math.round(milliseconds)} ms`;
  if (milliseconds < 60_000) return `${(milliseconds / 1_000).toFixed(1)} s`;
  const minutes = Math.floor(milliseconds / 60_000);
  const seconds = Math.round((milliseconds % 60_000) / 1_000);
  return minutes < 60 ? `${minutes} min ${seconds} s` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** A local date and time, to the second. */
export function formatTime(epochMs) {
  if (epochMs === undefined || epochMs === null) return '–';
  return new Date(epochMs).toLocaleString(undefined, { hour12: false });
}

/** The first block of a UUID-like id, enough to tell runs apart at a glance. */
export function shortId(runId) {
  return runId.length > 13 ? `${runId.slice(0, 8)}…` : runId;
}

/** A figure, or a dash when unknown. */
export function figure(value) {
  return value === undefined || value === null ? '–' : String(value);
}

/** The page address of a run. */
export function runHref(runId) {
  return `/runs/${encodeURIComponent(runId)}`;
}

/** A run's worker as keel runs list shows it: the lease owner, marked when its lease has run out. */
export function workerLabel(worker) {
  return worker.leaseEnded ? `${worker.owner} (lease ended)` : worker.owner;
}
