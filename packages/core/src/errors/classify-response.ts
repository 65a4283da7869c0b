import { type ClassifyOptions, classify } from './classify.js';
import { KeelError } from './keel-error.js';

/** How much of an error body is read: error bodies are small, and an HTML error page needs no more. */
export const MAX_ERROR_BODY_BYTES = 65_536;

/**
 * Classifies a fetch `Response` that is not ok, reading its body first (up to {@link MAX_ERROR_BODY_BYTES}) so that
 * provider error codes count: a 429 whose body says `insufficient_quota` is `provider.quota_exhausted`, a 400 whose
 * body says `context_length_exceeded` is `provider.context_overflow`. A body that cannot be read (already used, or
 * the connection dropped) is skipped and the status decides. `classify(response)` gives the same verdict from status
 * and headers alone, synchronously. The result's `cause` is an Error carrying `status`, `headers` and `body`.
 *
 * @example
 *   const response = await fetch(url, init);
 *   if (!response.ok) throw await classifyResponse(response, { provider: 'openai' });
 */
export async function classifyResponse(
  response: Response,
  options: ClassifyOptions = {},
): Promise<KeelError> {
  if (typeof response !== 'object' || response === null || typeof response.status !== 'number') {
    throw new KeelError('config.invalid', 'classifyResponse: expected a fetch Response.');
  }
  const body = await readBody(response);
  const exchange = Object.assign(new Error(response.statusText ?? ''), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
    body,
  });
  return classify(exchange, options);
}

async function readBody(response: Response): Promise<string | undefined> {
  if (response.bodyUsed || response.body === null || response.body === undefined) return undefined;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    while (text.length < MAX_ERROR_BODY_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    return text + decoder.decode();
  } catch {
    return text === '' ? undefined : text;
  } finally {
    // Release the connection whether or not the body was read to the end.
    reader.cancel().catch(() => {});
  }
}
