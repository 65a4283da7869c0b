import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { KeelError } from '@keel/core';
import { rowOf } from './render-table.js';
import { REPORT_SCRIPT } from './report-script.js';
import type { ChaosReport } from './run-chaos.js';

let chartSource: string | undefined;

/** Chart.js's browser build (4.6.1, from its package in node_modules), read once. */
function chartLibrary(): string {
  if (chartSource !== undefined) return chartSource;
  try {
    const directory = dirname(createRequire(import.meta.url).resolve('chart.js'));
    chartSource = readFileSync(join(directory, 'chart.umd.min.js'), 'utf8');
    return chartSource;
  } catch (error) {
    throw new KeelError(
      'config.invalid',
      `The chaos report cannot read Chart.js: ${(error as Error).message}`,
      {
        guidance: 'Reinstall @keel/chaos: its chart.js dependency must be present.',
        cause: error,
      },
    );
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.codePointAt(0)};`);
}

/** Text safe inside a `<script>` element: no `</script` can end it early. */
function scriptSafe(text: string): string {
  return text.replace(/<\/(script)/gi, '<\\/$1');
}

const TABLE_COLUMNS = [
  'scenario',
  'subject',
  'completed',
  'req/completed',
  'vs minimum',
  'while down',
  'p50',
  'p99',
  'dup effects',
  'untyped/hung',
  'failures',
  'goals',
];

const STYLE = `
  body { font-family: system-ui, sans-serif; margin: 24px auto; max-width: 1200px; color: #111827; padding: 0 16px; }
  h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #e5e7eb; }
  p.meta, p.note { color: #4b5563; font-size: 14px; }
  table { border-collapse: collapse; font-size: 13px; margin: 12px 0; }
  th, td { border-bottom: 1px solid #e5e7eb; padding: 4px 8px; text-align: left; white-space: nowrap; }
  td.missed { color: #b91c1c; font-weight: 600; } td.ok { color: #15803d; }
  .charts { display: flex; flex-wrap: wrap; gap: 12px; }
  ul.goals { font-size: 13px; } li.missed { color: #b91c1c; } li.met { color: #15803d; }
`;

/**
 * The report as one self-contained HTML page: Chart.js and the data inlined (it works offline and can be mailed),
 * with a summary (completion, requests per completed run and p99 run time by scenario and subject), the scorecard
 * table, and per scenario its goals and a timeline of upstream requests coloured by outcome, outage windows marked.
 */
export function renderHtml(report: ChaosReport): string {
  // Nested scenarios add how the child's failures reached the parent's model, before the failures.
  const columns = report.scorecards.some((card) => card.childErrors !== null)
    ? [...TABLE_COLUMNS.slice(0, -2), 'child errors typed/untyped', ...TABLE_COLUMNS.slice(-2)]
    : TABLE_COLUMNS;
  const rows = report.scorecards
    .map((card) => {
      const row = rowOf(card);
      const cells = columns.map((column) => {
        const value = row[column] ?? '';
        const type =
          column === 'goals' ? (value.startsWith('missed') ? ' class="missed"' : ' class="ok"') : '';
        return `<td${type}>${escapeHtml(value)}</td>`;
      });
      return `<tr>${cells.join('')}</tr>`;
    })
    .join('\n');
  const sections = report.scenarios
    .map((scenario) => {
      const cards = report.scorecards.filter((card) => card.scenario === scenario.name);
      const goals = cards
        .flatMap((card) =>
          card.goals.map((goal) => {
            const state = goal.met === null ? 'not exercised' : goal.met ? 'met' : 'missed';
            return `<li class="${state.replace(' ', '-')}">${escapeHtml(card.subject)}: ${escapeHtml(goal.target)} — ${escapeHtml(
              goal.actual,
            )} (${state})</li>`;
          }),
        )
        .join('\n');
      const timelines = cards
        .filter((card) => card.skipped === undefined)
        .map(
          (card) =>
            `<canvas width="560" height="260" data-timeline="1" data-scenario="${escapeHtml(card.scenario)}" ` +
            `data-subject="${escapeHtml(card.subject)}"></canvas>`,
        )
        .join('\n');
      return `<section id="scenario-${escapeHtml(scenario.name)}">
<h2>${escapeHtml(scenario.name)}: ${escapeHtml(scenario.title)}</h2>
<p class="note">${escapeHtml(scenario.description)}</p>
${goals === '' ? '' : `<ul class="goals">${goals}</ul>`}
<div class="charts">${timelines}</div>
</section>`;
    })
    .join('\n');
  const data = JSON.stringify(report).replace(/</g, '\\u003c');
  const subjects = report.subjects.map((subject) => subject.name).join(', ');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>keel chaos: ${escapeHtml(subjects)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>keel chaos: ${escapeHtml(subjects)}</h1>
<p class="meta">${report.runs} runs per scenario at once · seed ${report.seed} · cap ${report.capMs} ms per run ·
started ${escapeHtml(report.startedAt)} · task: ${escapeHtml(report.task)}</p>
<div class="charts">
<canvas id="chart-completion" width="560" height="300"></canvas>
<canvas id="chart-requests" width="560" height="300"></canvas>
<canvas id="chart-p99" width="560" height="300"></canvas>
</div>
<table>
<thead><tr>${columns.map((column) => `<th>${escapeHtml(column)}</th>`).join('')}</tr></thead>
<tbody>
${rows}
</tbody>
</table>
<p class="note">Completed: the framework returned the whole answer a fault-free run gives. vs minimum: upstream requests
against the fewest that complete the completed runs (a fault-free run's requests, plus, in expectation, one per
faulted request at the scenario's fault rate). While down: requests that reached a model during its outage. Times are real wall
time; long waits of the real world are compressed by shortening the outage windows and Retry-After of the simulated
provider, never by faking a clock.</p>
${sections}
<script>${scriptSafe(chartLibrary())}</script>
<script>window.KEEL_CHAOS_REPORT = ${data};</script>
<script>${scriptSafe(REPORT_SCRIPT)}</script>
</body>
</html>
`;
}
