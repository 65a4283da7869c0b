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

/**
 * The last block of a UUID-like id, enough to tell runs apart at a glance: keel's run ids begin with the time they
 * were made (runs of the same minute share their first characters) and end with random ones.
 */
export function shortId(runId) {
  return runId.length > 13 ? `…${runId.slice(-8)}` : runId;
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

/** US dollars: `$0.0123`, small amounts to the millionth (`$0.000042`); a dash when unknown. */
export function formatUsd(usd) {
  if (typeof usd !== 'number') return '–';
  if (usd === 0) return '$0';
  return `$${usd >= 0.01 ? usd.toFixed(4) : usd.toFixed(6)}`;
}

/** A run's cost line: total, by model, and calls of models without a price. */
export function costText(cost) {
  if (cost === undefined || cost === null) return '–';
  const models = Object.entries(cost.byModel ?? {}).map(([model, usd]) => `${model} ${formatUsd(usd)}`);
  const unpriced = cost.unpricedCalls > 0 ? `; ${cost.unpricedCalls} calls of models without a price` : '';
  return `${formatUsd(cost.totalUsd)}${models.length > 0 ? ` (${models.join(', ')})` : ''}${unpriced}`;
}
