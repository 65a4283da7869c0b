import { classify } from './classify.js';
import type { ErrorCode } from './codes.js';
import { KeelError } from './keel-error.js';

/** The tool code (and, where it differs from the code's default, whether it is retryable) of a provider code. */
const TOOL_CODES: Partial<Record<ErrorCode, { code: ErrorCode; retryable?: boolean }>> = {
  'provider.overloaded': { code: 'tool.unavailable' },
  'provider.rate_limited': { code: 'tool.unavailable' },
  'provider.quota_exhausted': { code: 'tool.unavailable', retryable: false },
  'provider.server_error': { code: 'tool.failed', retryable: true },
  'provider.conflict': { code: 'tool.failed', retryable: true },
  'provider.auth': { code: 'tool.permission_denied' },
  'provider.bad_request': { code: 'tool.invalid_input' },
  'provider.context_overflow': { code: 'tool.invalid_input' },
  'provider.not_found': { code: 'tool.failed', retryable: false },
};

/**
 * A value a tool threw, as a KeelError: classified once (see `classify`), and given a tool code when `classify` read
 * it as a provider fault (from an HTTP status such as `error.status`, a provider error body, or a message), since the
 * tool, not the model, failed; an unrecognised fault is `tool.failed` (not retryable). A KeelError the tool threw
 * itself, one found in the thrown value's cause chain, or one a user classification rule decided keeps its code.
 * Control signals are the caller's to check first.
 *
 * | what the tool's backend answered                     | tool code                | retryable |
 * |------------------------------------------------------|--------------------------|-----------|
 * | 503, 529, an overload body (`provider.overloaded`)   | `tool.unavailable`       | yes       |
 * | 429 (`provider.rate_limited`; its Retry-After kept)  | `tool.unavailable`       | yes       |
 * | 402, quota exhausted (`provider.quota_exhausted`)    | `tool.unavailable`       | no        |
 * | 504 (a gateway timed out: the outcome is unknown)    | `tool.timeout`           | yes       |
 * | 500, 502, any other 5xx (`provider.server_error`)    | `tool.failed`            | yes       |
 * | 409 (`provider.conflict`)                            | `tool.failed`            | yes       |
 * | 401, 403 (`provider.auth`)                           | `tool.permission_denied` | no        |
 * | 400, 413, 422, other 4xx (`provider.bad_request`, `provider.context_overflow`) | `tool.invalid_input` | no |
 * | 404 (`provider.not_found`)                           | `tool.failed`            | no        |
 * | any other `provider.*` code                          | `tool.failed`            | as classified |
 *
 * `tool.unavailable` says the service refused to serve, so nothing ran (a tool that is not idempotent may be
 * retried, and its fallback tools run); 500, 502 and 504 do not say that (a gateway may have passed the call on),
 * so they keep a tool that is not idempotent from being repeated. Network faults (`network.timeout`,
 * `network.connection`) keep their codes. `data.status` and `data.classifiedAs` (the provider code) are recorded.
 *
 * @example
 *   toolFailure(Object.assign(new Error('weather service unavailable'), { status: 503 }), 'get_weather').code;
 *   // 'tool.unavailable'
 */
export function toolFailure(thrown: unknown, toolName: string): KeelError {
  const error = classify(thrown, { provider: toolName });
  if (KeelError.isInstance(thrown)) return error;
  const rule = error.data.rule;
  if (error.code === 'internal.unexpected') {
    return new KeelError('tool.failed', `Tool "${toolName}" failed: ${error.message}`, {
      provider: toolName,
      data: { ...error.data },
      cause: thrown,
    });
  }
  const mapped = TOOL_CODES[error.code];
  if (mapped === undefined || rule === 'keel-error' || rule === 'user') return error;
  const status = error.status;
  const code: ErrorCode = status === 504 ? 'tool.timeout' : mapped.code;
  const retryable = status === 504 ? true : (mapped.retryable ?? error.retryable);
  return new KeelError(code, `Tool "${toolName}" failed: ${error.message}`, {
    retryable,
    retryAfterMs: retryable ? error.retryAfterMs : undefined,
    status,
    provider: toolName,
    data: {
      ...error.data,
      classifiedAs: error.code,
      ...(status === undefined ? {} : { status }),
    },
    cause: thrown,
  });
}
