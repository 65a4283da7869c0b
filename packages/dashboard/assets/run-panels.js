// The run page's read-only panels: the error, the report and budgets, the conversation and the tool ledger.
import { h, jsonBlock } from './dom.js';
import { costText, figure, formatDuration, formatTime } from './format.js';

/** A failed request or resume: keel's error code, message and guidance. */
export function problem(error) {
  return h(
    'div',
    { className: 'problem', role: 'alert' },
    h('strong', {}, error.code ?? 'error'),
    `: ${error.message}`,
    error.guidance ? h('p', { className: 'guidance' }, error.guidance) : null,
  );
}

/** The run's error, with its code, guidance and causes. */
export function errorPanel(error) {
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

function pairs(record) {
  const entries = Object.entries(record ?? {});
  return entries.length === 0 ? '–' : entries.map(([key, value]) => `${key} ${value}`).join(', ');
}

/** The report's figures and the budgets the stored state knows. */
export function report(run) {
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
      row('cost', costText(report.cost)),
      ...(run.session === undefined
        ? []
        : [
            row(
              'session cost',
              `${costText({ totalUsd: run.session.totalUsd, byModel: run.session.byModel, unpricedCalls: 0 })} over ${run.session.runs} run${run.session.runs === 1 ? '' : 's'} of session ${run.session.sessionId}`,
            ),
          ]),
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

/** The conversation (or a queued run's input, under `title`), each message shown as text. */
export function conversation(messages, title = 'Conversation') {
  return [
    h('h2', {}, `${title} (${messages.length})`),
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

/** The tool ledger: every call started, with its key and result. */
export function ledger(entries) {
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
