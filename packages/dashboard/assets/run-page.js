// One run: what it waits for (answered here, which resumes it as keel resume does), its error, its timeline chart,
// report, budgets, conversation and tool ledger. Reloads when the store says the run moved.
import { ApiError, getJson } from './api.js';
import { decisions } from './decisions.js';
import { h, jsonBlock, replace } from './dom.js';
import { formatDuration, formatTime } from './format.js';
import { conversation, errorPanel, ledger, problem, report } from './run-panels.js';
import { renderTimeline } from './timeline-panel.js';

const RESUME_POLL_MS = 500;

/** Shows the page of run `runId` in `context.main`. */
export function showRun(context, runId) {
  document.title = `keel · run ${runId}`;
  const view = { runId, context, sections: {}, pollTimer: undefined };
  const names = [
    'header',
    'resume',
    'decisions',
    'error',
    'output',
    'timeline',
    'report',
    'conversation',
    'ledger',
  ];
  for (const name of names) view.sections[name] = h('section', { className: `run-${name}` });
  replace(
    context.main,
    h('p', { className: 'crumbs' }, h('a', { href: '/' }, '← runs')),
    names.map((name) => view.sections[name]),
  );
  const load = () => reload(view);
  view.load = load;
  context.onChange((kind, data) => {
    if (kind === 'ready' || (kind === 'runs' && data.runIds.includes(runId))) load();
  });
  load();
}

async function reload(view) {
  clearTimeout(view.pollTimer);
  let run;
  try {
    run = await getJson(`/api/runs/${encodeURIComponent(view.runId)}`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return view.context.denied();
    replace(view.sections.header, h('h1', {}, `Run ${view.runId}`), problem(error));
    return;
  }
  const { sections } = view;
  replace(sections.header, header(run));
  replace(sections.resume, resumeStatus(run.resume));
  replace(sections.decisions, decisions(view, run));
  replace(sections.error, run.error ? errorPanel(run.error) : null);
  replace(
    sections.output,
    run.output === undefined ? null : [h('h2', {}, 'Output'), jsonBlock(run.output, 'output-text')],
  );
  renderTimeline(sections.timeline, run.timeline);
  replace(sections.report, report(run));
  replace(sections.conversation, conversation(run.messages));
  replace(sections.ledger, ledger(run.ledger));
  // The store does not record the dashboard's own resumes: follow one until it has finished.
  if (run.resume.active) view.pollTimer = setTimeout(view.load, RESUME_POLL_MS);
}

function header(run) {
  const summary = run.run;
  return [
    h('h1', {}, 'Run ', h('code', {}, summary.runId)),
    h(
      'p',
      { className: 'facts' },
      h('span', { className: `badge status-${summary.status}`, 'data-testid': 'run-status' }, summary.status),
      ` agent ${summary.agentName}`,
      summary.stopReason ? ` · stop reason ${summary.stopReason}` : '',
      run.stopDetail ? ` (${run.stopDetail})` : '',
      ` · ${formatDuration(summary.durationMs)} · step ${run.step} · started ${formatTime(summary.createdAtMs)}`,
      ` · updated ${formatTime(summary.updatedAtMs)} · version ${summary.version}`,
    ),
    run.cancellation
      ? h('p', { className: 'note' }, `Cancellation requested: ${run.cancellation.reason}`)
      : null,
  ];
}

function resumeStatus(resume) {
  if (resume.active)
    return h('p', { className: 'resuming', role: 'status' }, 'Resuming from this dashboard…');
  const last = resume.last;
  if (last?.error) {
    return h(
      'div',
      { className: 'problem', role: 'alert' },
      h('h2', {}, 'The resume failed'),
      problem(last.error),
    );
  }
  if (last?.outcome) {
    return h(
      'p',
      { className: 'note', role: 'status' },
      `Resumed from this dashboard: the run stopped ${last.outcome.status} (${last.outcome.stopReason}).`,
    );
  }
  return null;
}
