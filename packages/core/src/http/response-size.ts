import { KeelError } from '../errors/keel-error.js';
import { optionError } from '../options/option-error.js';

/**
 * The default cap on a successful response body, in bytes: 64 MiB. A Chat Completions or Messages answer is a few
 * kilobytes; a stream of 128k output tokens is about 30 MB of events. Anything larger is a runaway or hostile upstream,
 * which without a cap would be read into memory to the end (and, failing late, downloaded again by a retry).
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 67_108_864;

/**
 * The `provider.response_too_large` error (not retryable: the same request would bring the same body) for a body
 * (`what`: `body` or `event stream`) that went past `maxBytes`.
 */
export function responseTooLarge(provider: string | undefined, maxBytes: number, what: string): KeelError {
  return new KeelError(
    'provider.response_too_large',
    `${provider ?? 'the provider'} sent a response ${what} of more than maxResponseBytes (${maxBytes} bytes); it was not read further`,
    {
      provider,
      status: 200,
      data: { maxResponseBytes: maxBytes },
      guidance:
        'Ask for less output (maxOutputTokens), or raise the provider option maxResponseBytes if such answers are expected.',
    },
  );
}

/**
 * Checks a provider's `maxResponseBytes` option (undefined gives {@link DEFAULT_MAX_RESPONSE_BYTES}); a value that is
 * not a positive integer (or Infinity) fails with `config.invalid` naming `where`.
 */
export function checkMaxResponseBytes(value: unknown, where: string): number {
  if (value === undefined) return DEFAULT_MAX_RESPONSE_BYTES;
  if (value === Number.POSITIVE_INFINITY || (Number.isSafeInteger(value) && (value as number) > 0)) {
    return value as number;
  }
  throw optionError({
    where: where,
    option: 'maxResponseBytes',
    message: `maxResponseBytes must be a positive whole number of bytes (or Infinity), got ${String(value)}`,
  });
}

/**
 * Reads a response body as text, failing with `provider.response_too_large` as soon as it goes past `maxBytes` (at
 * once when `content-length` already says so) and cancelling the rest, so the connection is not read to the end.
 * Errors of the body stream itself are thrown as they are.
 */
export async function readBoundedText(
  response: Response,
  maxBytes: number,
  provider: string | undefined,
): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (response.body === null) return '';
  if (declared > maxBytes) {
    await response.body.cancel().catch(() => undefined);
    throw responseTooLarge(provider, maxBytes, 'body');
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const pieces: string[] = [];
  let receivedBytes = 0;
  let finished = false;
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        break;
      }
      receivedBytes += value.byteLength;
      if (receivedBytes > maxBytes) throw responseTooLarge(provider, maxBytes, 'body');
      pieces.push(decoder.decode(value, { stream: true }));
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
  pieces.push(decoder.decode());
  return pieces.join('');
}
