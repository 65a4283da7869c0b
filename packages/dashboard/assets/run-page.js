// One run: what it waits for (answered here, which resumes it as keel resume does), its error, its timeline chart,
// report, budgets, conversation and tool ledger. Reloads when the store says the run moved.
import { ApiError, getJson, postJson } from './api.js';
import { h, jsonBlock, replace } from './dom.js';
import { figure, formatDuration, formatTime } from './format.js';
import { drawTimeline } from './timeline-chart.js';

const RESUME_POLL_MS = 500;

/** Shows the page of run `runId` in `context.main`. */
export function showRun(context, runId) {
  document.title = `keel · run ${runId}`;
  const view = { runId, context, sections: {}, chart: undefined, pollTimer: undefined };
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

function problem(error) {
  return h(
    'div',
    { className: 'problem', role: 'alert' },
    h('strong', {}, error.code ?? 'error'),
    `: ${error.message}`,
    error.guidance ? h('p', { className: 'guidance' }, error.guidance) : null,
  );
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

function decisions(view, run) {
  if (run.pendingDecisions.length === 0) return null;
  const disabledReason = run.resume.available ? undefined : run.resume.unavailableReason;
  return [
    h('h2', {}, 'Waiting for a decision'),
    disabledReason ? h('p', { className: 'note' }, disabledReason) : null,
    run.pendingDecisions.map((decision) =>
      decisionCard(view, decision, disabledReason !== undefined || run.resume.active),
    ),
  ];
}

function decisionCard(view, decision, disabled) {
  const approval = decision.kind === 'approval';
  const message = h('p', { className: 'decision-message', role: 'status' });
  const reason = h('input', {
    type: 'text',
    name: 'reason',
    maxlength: 2000,
    placeholder: 'reason (shown to the model)',
    'aria-label': 'reason',
  });
  const buttons = [];
  const send = async (answer) => {
    for (const button of buttons) button.disabled = true;
    reason.disabled = true;
    message.textContent = 'Sending…';
    const item = { idempotencyKey: decision.idempotencyKey, answer };
    if (answer === 'reject' && reason.value.trim()) item.reason = reason.value.trim();
    try {
      await postJson(`/api/runs/${encodeURIComponent(view.runId)}/decisions`, { answers: [item] });
      message.textContent = 'Resuming…';
      view.load();
    } catch (error) {
      for (const button of buttons) button.disabled = false;
      reason.disabled = false;
      replace(message, problem(error));
    }
  };
  const button = (label, answer, className) => {
    const element = h(
      'button',
      { type: 'button', className, disabled, on: { click: () => send(answer) } },
      label,
    );
    buttons.push(element);
    return element;
  };
  return h(
    'article',
    { className: `decision decision-${decision.kind}`, 'data-key': decision.idempotencyKey },
    h(
      'h3',
      {},
      h('code', {}, decision.toolName),
      approval ? ' needs approval' : ' may or may not have run before the process stopped',
    ),
    h(
      'p',
      { className: 'facts' },
      `step ${decision.step} · call ${decision.callIndex} · key ${decision.idempotencyKey}`,
    ),
    h('p', {}, 'Arguments as the model sent them:'),
    jsonBlock(decision.arguments, 'json arguments'),
    approval
      ? h(
          'div',
          { className: 'actions' },
          button('Approve', 'approve', 'approve'),
          reason,
          button('Reject', 'reject', 'reject'),
        )
      : h(
          'div',
          { className: 'actions' },
          h(
            'p',
            { className: 'note' },
            'Executing again may repeat its effect; abandoning tells the model its outcome is unknown.',
          ),
          button('Execute again', 'execute', 'execute'),
          button('Abandon', 'abandon', 'abandon'),
        ),
    message,
  );
}

function errorPanel(error) {
  const causes = [];
  for (let cause = error.cause; cause; cause = cause.cause) causes.push(cause);
  return h(
    'div',
    { className: 'error-panel', role: 'alert' },
    h('h2', {}, 'Error'),
    h('p', {}, h('code', { className: 'error-code' }, error.code ?? error.name), ` ${error.message}`),
    error.guidance ? h('p', { className: 'guidance' }, `Guidance: ${error.guidance}`) : null,
    h(
      'p',
      { className: 'facts' },
      [
        error.category ? `category ${error.category}` : null,
        error.retryable === undefined ? null : error.retryable ? 'retryable' : 'not retryable',
        error.status ? `HTTP ${error.status}` : null,
        error.provider ? `from ${error.provider}` : null,
      ]
        .filter(Boolean)
        .join(' · '),
    ),
    error.data && Object.keys(error.data).length > 0 ? jsonBlock(error.data) : null,
    causes.map((cause) =>
      h(
        'p',
        { className: 'cause' },
        'caused by ',
        h('code', {}, cause.code ?? cause.name),
        ` ${cause.message}`,
      ),
    ),
  );
}

const TIMING_TEXT = { exact: 'stored time', step: 'placed by step', 'not-stored': 'time not stored' };

function renderTimeline(section, timeline) {
  const existing = section.querySelector('canvas');
  const canvas = existing ?? h('canvas', { 'aria-label': 'timeline chart', role: 'img' });
  if (!existing) {
    replace(
      section,
      h('h2', {}, 'Timeline'),
      h('div', { className: 'chart' }, canvas),
      h('ul', { className: 'notes' }),
      h('details', { className: 'timeline-details', open: true }, h('summary', {}, 'Entries'), h('div', {})),
    );
  }
  replace(
    section.querySelector('.notes'),
    timeline.notes.map((note) => h('li', {}, note)),
  );
  replace(
    section.querySelector('.timeline-details div'),
    h(
      'table',
      { className: 'timeline-entries' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['lane', 'what', 'step', 'from', 'to', 'timing'].map((name) => h('th', {}, name)),
        ),
      ),
      h(
        'tbody',
        {},
        timeline.entries.map((entry) =>
          h(
            'tr',
            { 'data-lane': entry.lane, 'data-timing': entry.timing },
            h('td', {}, entry.lane),
            h('td', {}, entry.label, entry.detail ? h('small', {}, ` ${entry.detail}`) : null),
            h('td', { className: 'number' }, figure(entry.step)),
            h('td', { className: 'number' }, `${Math.round(entry.startMs)} ms`),
            h('td', { className: 'number' }, `${Math.round(entry.endMs)} ms`),
            h('td', {}, TIMING_TEXT[entry.timing]),
          ),
        ),
      ),
    ),
  );
  drawTimeline(canvas, timeline);
}

function pairs(record) {
  const entries = Object.entries(record ?? {});
  return entries.length === 0 ? '–' : entries.map(([key, value]) => `${key} ${value}`).join(', ');
}

function report(run) {
  const report = run.report;
  const budgets = run.budgets;
  const row = (label, value) => h('tr', {}, h('th', { scope: 'row' }, label), h('td', {}, value));
  const left = budgets.deadlineAtMs - Date.now();
  const open = run.run.status === 'running' || run.run.status === 'interrupted';
  return [
    h('h2', {}, 'Report'),
    h(
      'table',
      { className: 'report' },
      row('steps', figure(report.steps)),
      row('requests', `${report.requests.total} (${pairs(report.requests.byModel)})`),
      row(
        'retries',
        `${report.retries.total} (model ${report.retries.model}, tool ${report.retries.tool}, store ${report.retries.store})`,
      ),
      row('waited between retries', formatDuration(report.waitingMs)),
      row(
        'fallbacks',
        report.fallbacks.used.length === 0
          ? '0'
          : report.fallbacks.used
              .map((used) => `step ${used.step}: ${used.from} → ${used.to} after ${used.errorCode}`)
              .join('; '),
      ),
      row(
        'breaker moves',
        report.breakerTransitions.length === 0
          ? '0'
          : report.breakerTransitions
              .map((move) => `${move.target} ${move.name} → ${move.to} at ${formatTime(move.atMs)}`)
              .join('; '),
      ),
      row('corrections', `${report.corrections.total} (${pairs(report.corrections.byKind)})`),
      row('context reductions', figure(report.contextReductions)),
      row(
        'tool calls',
        `${report.toolCalls.total} (${pairs(report.toolCalls.byTool)}), errors ${report.toolCalls.errors} (${pairs(report.toolCalls.errorsByCode)})`,
      ),
      row('errors', `${report.errors.total} (${pairs(report.errors.byCode)})`),
      row('guardrails tripped', figure(report.guardrailsTripped)),
      row('tokens', `in ${report.usage.inputTokens}, out ${report.usage.outputTokens}`),
      row('duration', formatDuration(report.durationMs)),
    ),
    h('h2', {}, 'Budgets'),
    h(
      'table',
      { className: 'budgets' },
      row(
        'run deadline',
        `${formatTime(budgets.deadlineAtMs)}${open ? ` (${left > 0 ? `${formatDuration(left)} left` : 'passed'}; time paused does not count)` : ''}`,
      ),
      row('steps taken', figure(budgets.steps)),
      row('tokens used', `in ${budgets.inputTokens}, out ${budgets.outputTokens}`),
      row('retries drawn', `${budgets.retries} (waited ${formatDuration(budgets.waitingMs)})`),
    ),
    h(
      'p',
      { className: 'note' },
      'The limits themselves (max turns, token budget, retry budget) live in the agent file, not in the stored run.',
    ),
  ];
}

function conversation(messages) {
  return [
    h('h2', {}, `Conversation (${messages.length})`),
    h(
      'ol',
      { className: 'messages' },
      messages.map((message) =>
        h(
          'li',
          { className: `message message-${message.role}${message.isError ? ' message-error' : ''}` },
          h(
            'span',
            { className: 'role' },
            message.role === 'tool' ? `tool ${message.toolName}` : message.role,
          ),
          message.content ? h('pre', { className: 'text' }, message.content) : null,
          (message.toolCalls ?? []).map((call) =>
            h(
              'div',
              { className: 'tool-call' },
              h('code', {}, call.name),
              ' ',
              jsonBlock(call.arguments, 'json arguments'),
            ),
          ),
        ),
      ),
    ),
  ];
}

function ledger(entries) {
  return [
    h('h2', {}, `Tool ledger (${entries.length})`),
    entries.length === 0
      ? h('p', { className: 'empty' }, 'No tool call was started.')
      : h(
          'table',
          { className: 'ledger' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ['step', 'call', 'tool', 'status', 'idempotency key', 'started', 'took', 'result'].map((name) =>
                h('th', {}, name),
              ),
            ),
          ),
          h(
            'tbody',
            {},
            entries.map((entry) =>
              h(
                'tr',
                { 'data-key': entry.idempotencyKey, 'data-status': entry.status },
                h('td', { className: 'number' }, entry.step),
                h('td', { className: 'number' }, entry.callIndex),
                h('td', {}, h('code', {}, entry.toolName)),
                h('td', {}, h('span', { className: `badge ledger-${entry.status}` }, entry.status)),
                h('td', {}, h('code', {}, entry.idempotencyKey)),
                h('td', {}, formatTime(entry.startedAtMs)),
                h(
                  'td',
                  { className: 'number' },
                  entry.completedAtMs === undefined
                    ? '–'
                    : formatDuration(entry.completedAtMs - entry.startedAtMs),
                ),
                h('td', {}, entry.result === undefined ? '–' : jsonBlock(entry.result)),
              ),
            ),
          ),
        ),
  ];
}
