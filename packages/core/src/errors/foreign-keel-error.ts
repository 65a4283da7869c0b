import { ERROR_CODES, isErrorCode } from './codes.js';
import { messageOf, readProperty } from './error-chain.js';
import { type JsonValue, KeelError } from './keel-error.js';
import { hasBrand } from './safe-read.js';
import { toJsonData } from './serialize.js';

const KEEL_ERROR = Symbol.for('keel.error');
const MAX_CODE_CHARS = 100;
const MAX_MESSAGE_CHARS = 1_000;

/**
 * A value branded as a KeelError that this keel cannot use as it is (see `KeelError.isInstance`), rebuilt from what
 * can be read of it: a KeelError from a newer keel whose code this one does not know, or a forged or damaged one.
 * Its code is kept when this keel knows it, else it becomes `internal.unexpected` with the unknown code in
 * `data.unknownCode`. Its message, retryability, wait, status, provider, guidance and data are kept when they have
 * the right types (the data as safe JSON); `classify`'s `provider` stands in for a missing provider. The original is
 * the cause. Undefined for a value without the brand. Never throws.
 */
export function adoptForeignKeelError(value: unknown, provider: string | undefined): KeelError | undefined {
  if (!hasBrand(value, KEEL_ERROR)) return undefined;
  const read = (key: string) => readProperty(value, key);
  const foreignCode = read('code');
  const known = isErrorCode(foreignCode);
  const code = known ? foreignCode : 'internal.unexpected';
  const message = read('message');
  const retryable = read('retryable');
  const retryAfterMs = read('retryAfterMs');
  const status = read('status');
  const foreignProvider = read('provider');
  const guidance = read('guidance');
  const data: Record<string, JsonValue> = {};
  const foreignData = toJsonData(read('data'));
  if (typeof foreignData === 'object' && foreignData !== null && !Array.isArray(foreignData)) {
    Object.assign(data, foreignData);
  }
  if (!known) {
    data.unknownCode =
      typeof foreignCode === 'string' ? foreignCode.slice(0, MAX_CODE_CHARS) : `[${typeof foreignCode}]`;
  }
  data.rule = 'foreign-keel-error';
  const text = typeof message === 'string' ? message : messageOf(value);
  const isRetryable = typeof retryable === 'boolean' ? retryable : ERROR_CODES[code].retryable;
  return new KeelError(code, text.slice(0, MAX_MESSAGE_CHARS) || code, {
    retryable: isRetryable,
    retryAfterMs:
      isRetryable && typeof retryAfterMs === 'number' && Number.isFinite(retryAfterMs) && retryAfterMs >= 0
        ? retryAfterMs
        : undefined,
    status:
      typeof status === 'number' && Number.isInteger(status) && status >= 100 && status <= 599
        ? status
        : undefined,
    provider: typeof foreignProvider === 'string' ? foreignProvider : provider,
    data,
    guidance: typeof guidance === 'string' ? guidance : undefined,
    cause: value,
  });
}
