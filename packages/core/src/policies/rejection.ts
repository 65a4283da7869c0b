import type { ErrorCode } from '../errors/codes.js';
import { KeelError, type KeelErrorOptions } from '../errors/keel-error.js';

/**
 * Builds a policy's refusal (an open breaker, a full bulkhead, an empty rate-limit bucket) without capturing a
 * stack trace: the stack would hold only keel's own frames, and capturing it costs more than the call it protects
 * (about 2.5 µs, half the cost of a rejected call).
 */
export function rejectionError(code: ErrorCode, message: string, options: KeelErrorOptions): KeelError {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new KeelError(code, message, options);
  } finally {
    Error.stackTraceLimit = limit;
  }
}
