// Draws a run's timeline with Chart.js (served from its npm package, loaded before this module as window.Chart):
// floating bars for spans (model windows, tool calls, waits), diamonds for moments (breaker moves, checkpoints).
import { formatDuration } from './format.js';

const LANES = [
  'queue',
  'run',
  'model',
  'retry',
  'fallback',
  'breaker',
  'correction',
  'tool',
  'checkpoint',
  'interruption',
];
const COLOURS = { ok: '#2f855a', error: '#c53030', waiting: '#b7791f', info: '#3b6fb6' };
const LANE_HEIGHT_PX = 34;
/**
 * Lanes of moments, drawn as diamonds, as is any other entry with a stored time and no length (a fallback, a retry
 * that waited nothing); everything else (and counts with no stored time) is a bar, at least 0.5% of the run wide.
 */
const MOMENT_LANES = ['breaker', 'checkpoint', 'correction'];

function isMoment(entry) {
  if (entry.timing === 'not-stored' || entry.lane === 'run' || entry.lane === 'queue') return false;
  return MOMENT_LANES.includes(entry.lane) || (entry.timing === 'exact' && entry.startMs === entry.endMs);
}

function colour(entry, alpha) {
  const hex = COLOURS[entry.outcome] ?? COLOURS.info;
  const faded = entry.timing === 'not-stored' ? 0.25 : entry.timing === 'step' ? 0.6 : 1;
  const value = Math.round(255 * Math.min(alpha, faded))
    .toString(16)
    .padStart(2, '0');
  return `${hex}${value}`;
}

const TIMING_TEXT = { exact: 'time stored', step: 'placed by step', 'not-stored': 'time not stored' };

function describe(entry) {
  const lines = [entry.label];
  if (entry.detail) lines.push(entry.detail);
  lines.push(
    entry.startMs === entry.endMs
      ? `at ${Math.round(entry.startMs)} ms (${TIMING_TEXT[entry.timing]})`
      : `${Math.round(entry.startMs)}–${Math.round(entry.endMs)} ms (${TIMING_TEXT[entry.timing]})`,
  );
  return lines;
}

/** Draws `timeline` on `canvas`, replacing the chart drawn there before. Returns the Chart. */
export function drawTimeline(canvas, timeline) {
  const Chart = window.Chart;
  Chart.getChart(canvas)?.destroy();
  const lanes = LANES.filter((lane) => timeline.entries.some((entry) => entry.lane === lane));
  const durationMs = Math.max(1, timeline.durationMs);
  const minimumWidthMs = durationMs / 200;
  const moments = timeline.entries.filter(isMoment);
  const spans = timeline.entries.filter((entry) => !moments.includes(entry));
  canvas.parentElement.style.height = `${lanes.length * LANE_HEIGHT_PX + 60}px`;
  return new Chart(canvas, {
    data: {
      datasets: [
        {
          type: 'bar',
          label: 'spans',
          data: spans.map((entry) => ({
            x: [entry.startMs, Math.max(entry.endMs, entry.startMs + minimumWidthMs)],
            y: entry.lane,
            entry,
          })),
          backgroundColor: spans.map((entry) => colour(entry, 0.85)),
          borderColor: spans.map((entry) => colour(entry, 1)),
          borderWidth: 1,
          borderSkipped: false,
          grouped: false,
          barPercentage: 0.7,
          categoryPercentage: 1,
        },
        {
          type: 'scatter',
          label: 'moments',
          data: moments.map((entry) => ({ x: entry.startMs, y: entry.lane, entry })),
          pointStyle: 'rectRot',
          pointRadius: 7,
          pointHoverRadius: 9,
          clip: false,
          backgroundColor: moments.map((entry) => colour(entry, 1)),
        },
      ],
    },
    options: {
      indexAxis: 'y',
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      parsing: { xAxisKey: 'x', yAxisKey: 'y' },
      scales: {
        x: {
          type: 'linear',
          min: 0,
          max: durationMs,
          ticks: { callback: (value) => formatDuration(value) },
          title: { display: true, text: 'since the run started' },
        },
        y: { type: 'category', labels: lanes, offset: true },
      },
      plugins: {
        legend: { display: false },
        tooltip: { callbacks: { label: (item) => describe(item.raw.entry) } },
      },
    },
  });
}
