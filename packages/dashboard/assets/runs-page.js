// The runs page: the newest runs with their task, the worker holding them and their figures, filters and search kept
// in the address, breakers last seen by runs, and live updates as runs move (or a worker takes one).
import { ApiError, getJson } from './api.js';
import { h, replace } from './dom.js';
import { figure, formatDuration, formatTime, runHref, shortId, workerLabel } from './format.js';

const STATUSES = ['queued', 'running', 'interrupted', 'completed', 'failed', 'cancelled'];
const RELOAD_DELAY_MS = 150;

/** Shows the runs page in `context.main`. */
export function showRuns(context) {
  document.title = 'keel · runs';
  const params = new URLSearchParams(location.search);
  const status = h(
    'select',
    { name: 'status', 'aria-label': 'status', on: { change: () => update() } },
    h('option', { value: '' }, 'any status'),
    STATUSES.map((value) => h('option', { value, selected: params.get('status') === value }, value)),
  );
  const agent = h('select', { name: 'agent', 'aria-label': 'agent', on: { change: () => update() } });
  const search = h('input', {
    type: 'search',
    name: 'q',
    placeholder: 'search run id, agent, task, worker, stop reason, error code',
    'aria-label': 'search',
    value: params.get('q') ?? '',
    on: { input: () => update() },
  });
  const problem = h('p', { className: 'problem', role: 'alert', hidden: true });
  const table = h('div', { className: 'runs' });
  const breakers = h('section', { className: 'breakers', hidden: true });
  replace(
    context.main,
    h('h1', {}, 'Runs'),
    h(
      'form',
      { className: 'filters', on: { submit: (event) => event.preventDefault() } },
      status,
      agent,
      search,
    ),
    problem,
    breakers,
    table,
  );

  let wantedAgent = params.get('agent') ?? '';
  let timer;
  const update = () => {
    wantedAgent = agent.value;
    const next = new URLSearchParams();
    if (status.value) next.set('status', status.value);
    if (agent.value) next.set('agent', agent.value);
    if (search.value) next.set('q', search.value);
    history.replaceState(null, '', next.size > 0 ? `/?${next}` : '/');
    load();
  };
  const load = async () => {
    const query = new URLSearchParams();
    if (status.value) query.set('status', status.value);
    if (wantedAgent) query.set('agent', wantedAgent);
    if (search.value.trim()) query.set('q', search.value.trim());
    try {
      const result = await getJson(`/api/runs?${query}`);
      problem.hidden = true;
      renderAgents(agent, result.agents, wantedAgent);
      renderBreakers(breakers, result.breakers);
      replace(table, runsTable(result.runs));
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return context.denied();
      problem.hidden = false;
      problem.textContent = `${error.code ?? 'error'}: ${error.message}`;
    }
  };
  context.onChange((kind) => {
    if (kind === 'error') return;
    clearTimeout(timer);
    timer = setTimeout(load, kind === 'ready' ? 0 : RELOAD_DELAY_MS);
  });
  load();
}

function renderAgents(select, agents, wanted) {
  const names = wanted && !agents.includes(wanted) ? [...agents, wanted] : agents;
  replace(
    select,
    h('option', { value: '' }, 'any agent'),
    names.map((name) => h('option', { value: name, selected: name === wanted }, name)),
  );
}

function renderBreakers(section, breakers) {
  section.hidden = breakers.length === 0;
  replace(
    section,
    h('h2', {}, 'Breakers'),
    h(
      'p',
      { className: 'note' },
      'The last move of each breaker seen by a listed run. Breakers live in each process; this is what runs reported.',
    ),
    h(
      'ul',
      {},
      breakers.map((breaker) =>
        h(
          'li',
          { className: `breaker breaker-${breaker.state}` },
          h('span', { className: 'badge' }, breaker.state),
          ` ${breaker.target} ${breaker.name} · ${formatTime(breaker.atMs)} · `,
          h('a', { href: runHref(breaker.runId) }, `run ${shortId(breaker.runId)}`),
        ),
      ),
    ),
  );
}

function runsTable(runs) {
  if (runs.length === 0) {
    return h('p', { className: 'empty' }, 'No runs match. Start one with: keel run <agent.yaml> "<task>"');
  }
  const head = [
    'run · task',
    'agent',
    'status',
    'stop reason',
    'duration',
    'requests',
    'retries',
    'fallbacks',
    'created',
    'worker',
  ];
  return h(
    'table',
    { className: 'run-table' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        head.map((name) => h('th', { scope: 'col' }, name)),
      ),
    ),
    h(
      'tbody',
      {},
      runs.map((run) =>
        h(
          'tr',
          { 'data-run-id': run.runId, 'data-status': run.status },
          h(
            'td',
            { className: 'run' },
            h('a', { href: runHref(run.runId), title: run.runId }, shortId(run.runId)),
            run.task ? h('div', { className: 'task', title: run.task }, run.task) : null,
          ),
          h('td', {}, run.agentName),
          h(
            'td',
            {},
            h('span', { className: `badge status-${run.status}` }, run.status),
            run.pendingDecisions > 0
              ? h('span', { className: 'waiting' }, ` ${run.pendingDecisions} waiting`)
              : null,
          ),
          h(
            'td',
            {},
            run.problem ?? run.stopReason ?? '–',
            run.errorCode ? h('small', {}, ` ${run.errorCode}`) : null,
          ),
          h(
            'td',
            { className: 'number' },
            run.status === 'queued'
              ? `queued ${formatDuration(run.queuedMs)}`
              : formatDuration(run.durationMs),
          ),
          h('td', { className: 'number' }, figure(run.requests)),
          h('td', { className: 'number' }, figure(run.retries)),
          h('td', { className: 'number' }, figure(run.fallbacks)),
          h('td', {}, formatTime(run.createdAtMs)),
          h('td', { className: 'worker' }, workerCell(run)),
        ),
      ),
    ),
  );
}

/** Who holds the run (its lease, as keel runs list shows it), or that a queued run waits for a worker. */
function workerCell(run) {
  if (run.worker) {
    return h(
      'code',
      { title: `lease until ${formatTime(run.worker.leaseExpiresAtMs)}` },
      workerLabel(run.worker),
    );
  }
  return run.status === 'queued' ? h('span', { className: 'waiting' }, 'waits for a worker') : '–';
}
