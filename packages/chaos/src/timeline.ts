import type { RequestSample, WindowSample } from './scorecard.js';

/** Upstream requests over time, by outcome, in bins: what the report's outage timeline draws. */
export interface Timeline {
  /** Width of a bin in milliseconds. */
  readonly binMs: number;
  /** One entry per bin from the scenario's start: requests answered cleanly, faulted, and sent to a model that was down. */
  readonly bins: readonly {
    readonly startMs: number;
    readonly ok: number;
    readonly faulted: number;
    readonly down: number;
  }[];
  /** Outage windows, in milliseconds from the scenario's start. */
  readonly windows: readonly WindowSample[];
}

const TARGET_BINS = 60;
const MINIMUM_BIN_MS = 25;

/** Bins `requests` from `startedAtMs` (about 60 bins whatever the span, each a multiple of 25 ms). */
export function timelineOf(observation: {
  readonly startedAtMs: number;
  readonly requests: readonly RequestSample[];
  readonly windows: readonly WindowSample[];
}): Timeline {
  const { startedAtMs, requests } = observation;
  const windows = observation.windows.map((window) => ({
    ...window,
    startMs: window.startMs - startedAtMs,
    endMs: window.endMs - startedAtMs,
  }));
  const lastMs = Math.max(
    0,
    ...requests.map((request) => request.atMs - startedAtMs),
    ...windows.map((window) => window.endMs),
  );
  const binMs = Math.max(MINIMUM_BIN_MS, Math.ceil(lastMs / TARGET_BINS / MINIMUM_BIN_MS) * MINIMUM_BIN_MS);
  const bins = Array.from({ length: Math.floor(lastMs / binMs) + 1 }, (_, index) => ({
    startMs: index * binMs,
    ok: 0,
    faulted: 0,
    down: 0,
  }));
  for (const request of requests) {
    const bin = bins[Math.max(0, Math.floor((request.atMs - startedAtMs) / binMs))]!;
    if (request.down) bin.down++;
    else if (request.fault === 'none') bin.ok++;
    else bin.faulted++;
  }
  return { binMs, bins, windows };
}
