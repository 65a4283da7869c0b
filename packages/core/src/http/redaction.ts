import { isControlSignal } from '../errors/control.js';
import { isSecretKey } from '../errors/redact.js';
import { createRedactor, type Redactor } from '../errors/redactor.js';

/**
 * The redactor of a provider's credentials: its API key and the value of every credential header it sends
 * (`authorization`, `x-api-key`, `api-key`, cookies, ...), whatever their shape.
 */
export function credentialRedactor(
  apiKey: string | undefined,
  headers: Readonly<Record<string, string>> = {},
): Redactor {
  const headerSecrets = Object.entries(headers)
    .filter(([name]) => isSecretKey(name))
    .map(([, value]) => value);
  return createRedactor([apiKey, ...headerSecrets]);
}

/** What {@link withRedactedErrors} needs of a model request. */
export interface RedactedCallRequest {
  signal: AbortSignal;
  onTextDelta?: (delta: string) => void;
}

/**
 * Runs one provider call at the boundary where its failures leave the provider, so that no error it throws can
 * carry a known secret to anything downstream (events, run state, checkpoints, logs, `console.log(error)`). `call`
 * receives the `onTextDelta` to hand the stream reader. Whatever `call` throws is replaced by the redactor's copy
 * (`Redactor.error`), except what the provider does not own, which is rethrown as it is: the signal's own reason
 * after an abort, a control signal, and an error thrown by the caller's `onTextDelta`.
 *
 * @example
 *   generate: (request) => withRedactedErrors(redactor, request, (onTextDelta) => send(request, onTextDelta)),
 */
export async function withRedactedErrors<T>(
  redactor: Redactor,
  request: RedactedCallRequest,
  call: (onTextDelta: ((delta: string) => void) | undefined) => Promise<T>,
): Promise<T> {
  const { signal, onTextDelta } = request;
  let callbackError: { error: unknown } | undefined;
  const watched =
    onTextDelta === undefined
      ? undefined
      : (delta: string): void => {
          try {
            onTextDelta(delta);
          } catch (error) {
            callbackError = { error };
            throw error;
          }
        };
  try {
    return await call(watched);
  } catch (error) {
    if (callbackError !== undefined && callbackError.error === error) throw error;
    if (signal.aborted && error === signal.reason) throw error;
    if (isControlSignal(error)) throw error;
    throw redactor.error(error);
  }
}
