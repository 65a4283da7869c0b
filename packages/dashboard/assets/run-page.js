// One run: the worker holding it, what it waits for (answered here, which resumes it as keel resume does; or, queued,
// a worker), its error, its timeline chart, report, budgets, conversation and tool ledger. Reloads when the store says
// the run moved.
import { ApiError, getJson } from './api.js';
import { decisions } from './decisions.js';
import { h, jsonBlock, replace } from './dom.js';
import { formatDuration, formatTime, runHref, workerLabel } from './format.js';
import { conversation, errorPanel, ledger, problem, report } from './run-panels.js';
import { renderTimeline } from './timeline-panel.js';

const RESUME_POLL_MS = 500;

/** Shows the page of run `runId` in `context.main`. */
export function showRun(context, runId) {
  document.title = `keel · run ${runId}`;
  const view = { runId, context, sections: {}, pollTimer: undefined };
  const names = [
    'header',
    'tree',
    'resume',
    'queue',
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
  replace(sections.tree, tree(run));
  replace(sections.resume, resumeStatus(run.resume));
  replace(sections.queue, run.queued ? queuePanel(run) : null);
  replace(sections.decisions, decisions(view, run));
  replace(sections.error, run.error ? (isWaiting(run) ? pausedPanel(run) : errorPanel(run.error)) : null);
  replace(
    sections.output,
    run.output === undefined ? null : [h('h2', {}, 'Output'), jsonBlock(run.output, 'output-text')],
  );
  renderTimeline(sections.timeline, run.timeline);
  // A queued run has no report and no tool call yet: only its input.
  replace(sections.report, run.queued ? null : report(run));
  replace(sections.conversation, conversation(run.messages, run.queued ? 'Input' : 'Conversation'));
  replace(sections.ledger, run.queued ? null : ledger(run.ledger));
  // The store does not record the dashboard's own resumes: follow one until it has finished.
  if (run.resume.active) view.pollTimer = setTimeout(view.load, RESUME_POLL_MS);
}

/** A run interrupted to wait (for decisions, or paused at its checkpoint) is in a state, not failed. */
function isWaiting(run) {
  return run.run.status === 'interrupted' && run.error?.code === 'run.interrupted';
}

/**
 * A waiting run: its decisions (above) say what it waits for and answer it; a run paused with none (its worker
 * stopped) is resumed with keel resume, or by a worker.
 */
function pausedPanel(run) {
  if (run.pendingDecisions.length > 0) return null;
  return h(
    'div',
    { className: 'waiting-panel', role: 'status' },
    h('h2', {}, 'Paused'),
    h('p', {}, run.error.message),
    h('p', { className: 'note' }, 'Resume it with ', h('code', {}, `keel resume ${run.run.runId}`), '.'),
  );
}

function header(run) {
  const summary = run.run;
  const queuedFor = summary.queuedMs === undefined ? '' : formatDuration(summary.queuedMs);
  return [
    h('h1', {}, 'Run ', h('code', {}, summary.runId)),
    h(
      'p',
      { className: 'facts' },
      h('span', { className: `badge status-${summary.status}`, 'data-testid': 'run-status' }, summary.status),
      ` agent ${summary.agentName}`,
      summary.stopReason ? ` · stop reason ${summary.stopReason}` : '',
      run.stopDetail ? ` (${run.stopDetail})` : '',
      run.queued
        ? ` · submitted ${formatTime(run.queued.submittedAtMs)} · ${summary.status === 'queued' ? 'waiting' : 'waited'} ${queuedFor}`
        : ` · ${formatDuration(summary.durationMs)} · step ${run.step} · started ${formatTime(summary.createdAtMs)}` +
            (queuedFor ? ` (after ${queuedFor} in the queue)` : ''),
      ` · updated ${formatTime(summary.updatedAtMs)} · version ${summary.version}`,
    ),
    summary.worker ? workerFacts(summary.worker) : null,
    run.cancellation
      ? h('p', { className: 'note' }, `Cancellation requested: ${run.cancellation.reason}`)
      : null,
  ];
}

/** The worker holding the run: its lease, and what an ended lease means. */
function workerFacts(worker) {
  return h(
    'p',
    { className: 'facts worker', 'data-testid': 'run-worker' },
    'worker ',
    h('code', {}, workerLabel(worker)),
    worker.leaseEnded
      ? ` · lease ended ${formatTime(worker.leaseExpiresAtMs)}: its worker died or paused the run; another worker takes it`
      : ` · lease until ${formatTime(worker.leaseExpiresAtMs)}`,
  );
}

/** What a run no worker has started waits for, or that it ended before one did. */
function queuePanel(run) {
  const summary = run.run;
  if (summary.status !== 'queued') {
    return [
      h('h2', {}, `${summary.status[0].toUpperCase()}${summary.status.slice(1)} while queued`),
      h('p', { className: 'note' }, 'No worker started it: nothing of it ran.'),
    ];
  }
  return [
    h('h2', {}, 'Waiting for a worker'),
    h(
      'p',
      { className: 'queued', role: 'status' },
      summary.worker && !summary.worker.leaseEnded
        ? `Worker ${summary.worker.owner} has taken it and is starting it.`
        : `No worker has started it yet. A worker serving agent ${summary.agentName} (keel worker) takes it from the queue and runs it from the input below; its report and tool ledger begin then.`,
    ),
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

/** The run's place in a tree of agents: the run that started it, and the child runs it started (each one opens). */
function tree(run) {
  const children = run.children ?? [];
  if (run.parentRunId === undefined && children.length === 0) return null;
  return [
    h('h2', {}, 'Agents'),
    run.parentRunId === undefined
      ? null
      : h(
          'p',
          { className: 'parent-run' },
          'Started by run ',
          h('a', { href: runHref(run.parentRunId) }, run.parentRunId),
        ),
    children.length === 0
      ? null
      : h(
          'ul',
          { className: 'child-runs' },
          children.map((child) =>
            h(
              'li',
              {},
              h('a', { href: runHref(child.runId), title: child.runId }, child.agentName),
              ` (${child.kind === 'handoff' ? 'handoff' : `agent tool ${child.toolName}`}) ${child.status}`,
            ),
          ),
        ),
  ];
}
