import { type ClassifyOptions, classify } from './classify.js';
import { KeelError } from './keel-error.js';
import { createRedactor } from './redactor.js';

/** How much of an error body is read: error bodies are small, and an HTML error page needs no more. */
export const MAX_ERROR_BODY_BYTES = 65_536;

/** The longest a timer can wait (Node fires a longer one at once). */
const MAX_TIMER_MS = 2_147_483_647;

/** Options of {@link classifyResponse}: those of `classify`, and how long the body may take. */
export interface ClassifyResponseOptions extends ClassifyOptions {
  /**
   * The longest to wait for the error body, in milliseconds; a body still incomplete by then is dropped and the
   * status and headers decide. Defaults to 5_000.
   */
  maxBodyWaitMs?: number;
}

/**
 * Classifies a fetch `Response` that is not ok, reading its body first (up to {@link MAX_ERROR_BODY_BYTES}) so that
 * provider error codes count: a 429 whose body says `insufficient_quota` is `provider.quota_exhausted`, a 400 whose
 * body says `context_length_exceeded` is `provider.context_overflow`. A body that cannot be read (already used, the
 * connection dropped, still incomplete after `maxBodyWaitMs`, or `signal` aborted before or while it is read) is
 * skipped, the reader cancelled, and the status and headers decide. `classify(response)` gives the same verdict from
 * status and headers alone, synchronously. The result's `cause` is an Error carrying `status`, `statusText`, `headers`
 * (a plain record) and `body` (text), with credentials redacted (see `redactSecrets`; secret-named headers such as
 * `set-cookie` are dropped whole).
 *
 * @example
 *   const response = await fetch(url, { signal });
 *   if (!response.ok) throw await classifyResponse(response, { provider: 'openai', signal });
 */
export async function classifyResponse(
  response: Response,
  options: ClassifyResponseOptions = {},
): Promise<KeelError> {
  if (typeof response !== 'object' || response === null || typeof response.status !== 'number') {
    throw new KeelError('config.invalid', 'classifyResponse: expected a fetch Response.', {
      data: { option: 'response' },
    });
  }
  if (typeof options !== 'object' || options === null) {
    throw new KeelError('config.invalid', 'classifyResponse: options must be an object.', {
      data: { option: 'options' },
    });
  }
  const { maxBodyWaitMs = 5_000, ...classifyOptions } = options;
  if (typeof maxBodyWaitMs !== 'number' || !(maxBodyWaitMs >= 0 && maxBodyWaitMs <= MAX_TIMER_MS)) {
    throw new KeelError(
      'config.invalid',
      `classifyResponse: maxBodyWaitMs must be a number of milliseconds from 0 to ${MAX_TIMER_MS}, got ${String(maxBodyWaitMs)}.`,
      { data: { option: 'maxBodyWaitMs' } },
    );
  }
  const body = await readBody(response, maxBodyWaitMs, options.signal);
  const exchange = Object.assign(new Error(response.statusText ?? ''), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
    body,
  });
  // Classified from the raw body (a redacted one may not parse), then kept only redacted: the error is logged and
  // stored, and a body echoing a credential must not travel with it.
  return createRedactor().error(classify(exchange, classifyOptions));
}

async function readBody(
  response: Response,
  maxBodyWaitMs: number,
  signal: AbortSignal | undefined,
): Promise<string | undefined> {
  if (response.bodyUsed || response.body === null || response.body === undefined) return undefined;
  if (signal?.aborted) {
    response.body.cancel().catch(ignore);
    return undefined;
  }
  const reader = response.body.getReader();
  let stopped = false;
  // Cancelling the reader ends a pending read at once (as done), whatever the stream's source is doing.
  const stop = (): void => {
    stopped = true;
    reader.cancel().catch(ignore);
  };
  const timer = setTimeout(stop, maxBodyWaitMs);
  // The wait is bounded anyway: it must not keep a process alive that has nothing else to do.
  (timer as { unref?: () => void }).unref?.();
  signal?.addEventListener('abort', stop, { once: true });
  const decoder = new TextDecoder();
  let text = '';
  try {
    while (text.length < MAX_ERROR_BODY_BYTES) {
      const { done, value } = await reader.read();
      if (done || stopped) break;
      text += decoder.decode(value, { stream: true });
    }
    // A body cut short by the deadline or an abort would be half a JSON document: the status decides instead.
    return stopped ? undefined : text + decoder.decode();
  } catch {
    return stopped || text === '' ? undefined : text;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', stop);
    // Release the connection whether or not the body was read to the end.
    if (!stopped) reader.cancel().catch(ignore);
  }
}

function ignore(): void {}
