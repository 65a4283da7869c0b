// The dashboard's entry: picks the page from the address (/ for the runs, /runs/<id> for one run), asks for the
// token when this tab has none, and shows whether live updates are flowing.
import { readToken, saveToken, watchChanges } from './api.js';
import { h, replace } from './dom.js';
import { showRun } from './run-page.js';
import { showRuns } from './runs-page.js';

const main = document.getElementById('main');
const live = document.getElementById('live');

const LIVE_TEXT = {
  connecting: 'connecting…',
  live: 'live',
  offline: 'offline: reconnecting…',
  denied: 'no access',
};

function setLive(state) {
  live.dataset.state = state;
  live.textContent = LIVE_TEXT[state] ?? state;
}

function askForToken(message) {
  setLive('denied');
  const input = h('input', { type: 'password', name: 'token', autocomplete: 'off', 'aria-label': 'token' });
  const form = h(
    'form',
    {
      className: 'token-form',
      on: {
        submit: (event) => {
          event.preventDefault();
          saveToken(input.value.trim());
          location.reload();
        },
      },
    },
    h('h1', {}, 'This dashboard needs its token'),
    h('p', {}, message),
    h('label', {}, 'Token ', input),
    h('button', { type: 'submit' }, 'Open'),
  );
  replace(main, form);
}

function start() {
  const token = readToken();
  if (!token) {
    askForToken(
      'Open the address keel dashboard printed when it started (it ends with #token=…), or paste the token.',
    );
    return;
  }
  const listeners = new Set();
  const context = {
    main,
    onChange: (listener) => listeners.add(listener),
    denied: () => askForToken('The token was refused: the dashboard may have been restarted with a new one.'),
  };
  watchChanges(
    (kind, data) => {
      setLive(kind === 'error' ? 'store-error' : 'live');
      for (const listener of listeners) listener(kind, data);
    },
    (state) => (state === 'denied' ? context.denied() : setLive(state)),
  );
  const match = /^\/runs\/([^/]+)$/.exec(location.pathname);
  if (match) showRun(context, decodeURIComponent(match[1]));
  else showRuns(context);
}

start();
