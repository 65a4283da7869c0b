import { messageOf, readProperty } from './error-chain.js';
import { isArraySafely } from './safe-read.js';

// As deep as serialisation follows causes.
const MAX_DEPTH = 8;
const MAX_MEMBERS = 32;

/**
 * `cause` as a KeelError keeps it: the value itself when every link of its chain can be read (what `util.inspect`,
 * `console.log` and loggers read: prototype, own keys, `name`, `message`, `stack`, `cause`, `errors`), else a copy
 * made of plain `Error`s that says what could be read. A revoked proxy, a proxy whose traps throw or a throwing
 * `stack` getter kept as a cause would make `console.log(error)` throw in the user's hands.
 */
export function readableCause(cause: unknown): unknown {
  return isReadableChain(cause, 0, new Set()) ? cause : readableCopy(cause, 0);
}

function isReadableChain(value: unknown, depth: number, seen: Set<unknown>): boolean {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return true;
  if (seen.has(value) || depth >= MAX_DEPTH) return true;
  seen.add(value);
  let cause: unknown;
  let members: unknown;
  try {
    const record = value as Record<string, unknown>;
    Reflect.getPrototypeOf(value);
    Reflect.ownKeys(value);
    void record.name;
    void record.message;
    void record.stack;
    cause = record.cause;
    members = record.errors;
  } catch {
    return false;
  }
  if (!isReadableChain(cause, depth + 1, seen)) return false;
  if (members === undefined) return true;
  if (!isArraySafely(members)) return isReadableChain(members, depth + 1, seen);
  try {
    return members.slice(0, MAX_MEMBERS).every((member) => isReadableChain(member, depth + 1, seen));
  } catch {
    return false;
  }
}

/** A plain Error standing for `value`: its name and message where they can be read, its cause likewise. */
function readableCopy(value: unknown, depth: number): unknown {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return value;
  const name = readProperty(value, 'name');
  const message = readProperty(value, 'message');
  const copy = new Error(typeof message === 'string' ? message : messageOf(value));
  copy.name = typeof name === 'string' && name !== '' ? name : 'UnreadableValue';
  const stack = readProperty(value, 'stack');
  copy.stack = typeof stack === 'string' ? stack : `${copy.name}: ${copy.message}`;
  const cause = readProperty(value, 'cause');
  if (cause !== undefined && depth + 1 < MAX_DEPTH) {
    copy.cause = isReadableChain(cause, 0, new Set()) ? cause : readableCopy(cause, depth + 1);
  }
  return copy;
}
