import type { ChaosReport } from './run-chaos.js';
import { formatPercent, formatShare, type Scorecard } from './scorecard.js';

/** US dollars for people: `$0.0123`, small amounts to the millionth (`$0.000042`). */
export function formatUsd(usd: number): string {
  if (usd === 0) return '$0';
  return `$${usd >= 0.01 ? usd.toFixed(4) : usd.toFixed(6)}`;
}

/** A duration for people: `840 ms`, `2.4 s`. */
export function formatDuration(milliseconds: number | null): string {
  if (milliseconds === null) return '-';
  return milliseconds < 1_000 ? `${Math.round(milliseconds)} ms` : `${(milliseconds / 1_000).toFixed(1)} s`;
}

/**
 * The goals of a scorecard in a few characters: the goals missed (`missed: completion`), else `ok`, followed by the
 * goals not exercised (`ok, not exercised: probes`): a goal whose precondition did not happen is never shown as met.
 */
export function goalSummary(card: Scorecard): string {
  if (card.skipped !== undefined) return 'skipped';
  const missed = card.goals.filter((goal) => goal.met === false).map((goal) => goal.goal);
  const idle = card.goals.filter((goal) => goal.met === null).map((goal) => goal.goal);
  const notExercised = idle.length === 0 ? '' : `not exercised: ${idle.join(', ')}`;
  if (missed.length > 0)
    return `missed: ${missed.join(', ')}${notExercised === '' ? '' : `; ${notExercised}`}`;
  if (!card.goals.some((goal) => goal.met === true)) return notExercised === '' ? 'n/a' : notExercised;
  return notExercised === '' ? 'ok' : `ok; ${notExercised}`;
}

/** The most frequent failure codes of a scorecard, `code count` separated by commas (`-` for none). */
export function topFailures(card: Scorecard, limit = 3): string {
  const entries = Object.entries(card.failuresByCode).sort(([, left], [, right]) => right - left);
  if (entries.length === 0) return '-';
  const shown = entries.slice(0, limit).map(([code, count]) => `${code} ${count}`);
  return entries.length > limit ? `${shown.join(', ')}, ...` : shown.join(', ');
}

/** The cells of one scorecard's row, by column. */
export function rowOf(card: Scorecard): Record<string, string> {
  const skipped = card.skipped !== undefined;
  return {
    scenario: card.scenario,
    subject: card.subject,
    completed: skipped ? '-' : formatPercent(card.completionRate),
    '429s':
      card.refusals === null || card.refusals.rate === null
        ? '-'
        : `${formatShare(card.refusals.rate)} (${card.refusals.requests})`,
    'req/completed': card.requestsPerCompletedRun === null ? '-' : card.requestsPerCompletedRun.toFixed(2),
    'cost/completed': card.costPerCompletedRunUsd === null ? '-' : formatUsd(card.costPerCompletedRunUsd),
    'vs minimum': card.amplification === null ? '-' : `${card.amplification.toFixed(2)}x`,
    'while down': skipped ? '-' : String(card.requests.whileDown),
    p50: formatDuration(card.durationMs.p50),
    p99: formatDuration(card.durationMs.p99),
    wall: skipped ? '-' : formatDuration(card.wallMs),
    'dup effects': skipped ? '-' : String(card.duplicateSideEffects),
    'untyped/hung': skipped ? '-' : `${card.untyped}/${card.hung}`,
    'child errors typed/untyped':
      card.childErrors === null ? '-' : `${card.childErrors.typed}/${card.childErrors.untyped}`,
    failures: skipped ? (card.skipped ?? '') : topFailures(card),
    goals: goalSummary(card),
  };
}

/** Lays rows out in aligned columns, the header first. */
export function alignColumns(columns: readonly string[], rows: readonly Record<string, string>[]): string[] {
  const widths = columns.map((column) =>
    Math.max(column.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, index) => cell.padEnd(widths[index]!))
      .join('  ')
      .trimEnd();
  return [
    line(columns),
    line(widths.map((width) => '-'.repeat(width))),
    ...rows.map((row) => line(columns.map((column) => row[column] ?? ''))),
  ];
}

/**
 * The report as a text table, one row per scenario and subject, followed by every goal that was missed and what was
 * measured instead.
 */
export function renderTable(report: ChaosReport): string {
  const several = report.subjects.length > 1;
  // A scenario with a quota adds the share of requests answered 429 and the wall time the runs took together.
  const quota = report.scorecards.some((card) => card.refusals !== null);
  const columns = [
    'scenario',
    ...(several ? ['subject'] : []),
    'completed',
    ...(quota ? ['429s'] : []),
    'req/completed',
    'cost/completed',
    'vs minimum',
    'while down',
    'p50',
    'p99',
    ...(quota ? ['wall'] : []),
    'dup effects',
    'untyped/hung',
    // Nested scenarios only: how the child's failures reached the parent's model.
    ...(report.scorecards.some((card) => card.childErrors !== null) ? ['child errors typed/untyped'] : []),
    'failures',
    'goals',
  ];
  const lines = alignColumns(columns, report.scorecards.map(rowOf));
  const missed = report.scorecards.flatMap((card) =>
    card.goals
      .filter((goal) => goal.met === false)
      .map(
        (goal) =>
          `  ${card.scenario}${several ? ` (${card.subject})` : ''}: ${goal.target}; measured ${goal.actual}`,
      ),
  );
  lines.push('');
  lines.push(
    `${report.runs} runs per scenario at once, seed ${report.seed}, cap ${formatDuration(report.capMs)} per run; ` +
      `task: ${report.task}`,
  );
  for (const subject of report.subjects) {
    const { calibration } = subject;
    lines.push(
      `${subject.name}: a fault-free run takes ${calibration.requestsPerRun} requests and ` +
        `${calibration.effectsPerRun} tool calls (the minimum is counted from it)` +
        (subject.nestedCalibration === undefined
          ? ''
          : `; nested, ${subject.nestedCalibration.requestsPerRun} requests and ` +
            `${subject.nestedCalibration.effectsPerRun} tool calls`) +
        (subject.handoffCalibration === undefined
          ? ''
          : `; with a handoff, ${subject.handoffCalibration.requestsPerRun} requests and ` +
            `${subject.handoffCalibration.effectsPerRun} tool calls`),
    );
  }
  const idle = report.scorecards.flatMap((card) =>
    card.goals
      .filter((goal) => goal.met === null)
      .map(
        (goal) => `  ${card.scenario}${several ? ` (${card.subject})` : ''}: ${goal.goal}: ${goal.actual}`,
      ),
  );
  if (missed.length > 0) lines.push('goals missed:', ...missed);
  else lines.push('every goal that was exercised was met');
  if (idle.length > 0) lines.push('goals not exercised (their precondition did not happen):', ...idle);
  return lines.join('\n');
}

/** One line for stderr as a scenario finishes: what a person watching the suite wants to see. */
export function progressLine(card: Scorecard): string {
  const who = `${card.scenario} · ${card.subject}`;
  if (card.skipped !== undefined) return `- ${who}: skipped (${card.skipped})`;
  const missed = card.goals.some((goal) => goal.met === false);
  return (
    `${missed ? '✗' : '✓'} ${who}: ${card.completed}/${card.runs} completed, ` +
    `${card.requests.total} requests, p99 ${formatDuration(card.durationMs.p99)} (${formatDuration(card.wallMs)})`
  );
}
