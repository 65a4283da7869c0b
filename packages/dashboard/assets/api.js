// Talks to the dashboard's JSON API. Every request carries the token (kept for this tab in sessionStorage; it
// arrives in the URL's #token= fragment, which browsers never send to a server, and is then removed from the
// address bar). Live changes come as server-sent events, read with fetch so that the token travels in a header.

const TOKEN_KEY = 'keel-dashboard-token';

/** Takes the token from the address's fragment (then hides it), or from this tab's storage. */
export function readToken() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const fromUrl = fragment.get('token');
  if (fromUrl) {
    sessionStorage.setItem(TOKEN_KEY, fromUrl);
    history.replaceState(null, '', location.pathname + location.search);
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

/** Keeps a token typed by the user. */
export function saveToken(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
}

/** A failed API call, with keel's error code, message and guidance. */
export class ApiError extends Error {
  constructor(status, error) {
    super(error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = error?.code ?? 'http';
    this.guidance = error?.guidance;
  }
}

async function request(path, init = {}) {
  const token = sessionStorage.getItem(TOKEN_KEY) ?? '';
  const response = await fetch(path, {
    ...init,
    headers: { ...init.headers, authorization: `Bearer ${token}` },
    credentials: 'omit',
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new ApiError(response.status, body.error);
  return body;
}

/** GETs JSON from the API. */
export function getJson(path) {
  return request(path);
}

/** POSTs JSON to the API. */
export function postJson(path, value) {
  return request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(value),
  });
}

const RECONNECT_MS = 2_000;

/**
 * Follows the store's changes: `onChange(kind, data)` for each event (`ready`, `runs` with the run ids that moved,
 * `error` when the store failed). Reconnects after a lost connection; `onState` hears `live`, `offline` or `denied`.
 * Returns a function that stops following.
 */
export function watchChanges(onChange, onState) {
  let stopped = false;
  let controller;
  const connect = async () => {
    controller = new AbortController();
    try {
      const response = await fetch('/api/live', {
        headers: { authorization: `Bearer ${sessionStorage.getItem(TOKEN_KEY) ?? ''}` },
        signal: controller.signal,
        credentials: 'omit',
      });
      if (response.status === 401) {
        onState('denied');
        return;
      }
      if (!response.ok || response.body === null) throw new Error(`HTTP ${response.status}`);
      onState('live');
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end = buffer.indexOf('\n\n');
        while (end !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: ?(.*)$/m.exec(block)?.[1] ?? 'message';
          const data = block
            .split('\n')
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).trimStart())
            .join('\n');
          if (event !== 'ping') onChange(event, data === '' ? {} : JSON.parse(data));
          end = buffer.indexOf('\n\n');
        }
      }
    } catch {
      // Lost connection: shown as offline below, then tried again.
    }
    if (!stopped) {
      onState('offline');
      setTimeout(connect, RECONNECT_MS);
    }
  };
  connect();
  return () => {
    stopped = true;
    controller?.abort();
  };
}
