import { isArraySafely } from './safe-read.js';

/** How many links (the error, its causes, and the members of aggregate errors) are examined at most. */
export const MAX_CHAIN_LINKS = 32;

/**
 * The error followed by its causes and, for an `AggregateError`, its members (Node's happy-eyeballs connect throws
 * one per address tried), top first. Cycle-safe and bounded, because thrown values come from code we do not control.
 */
export function errorChain(error: unknown): unknown[] {
  const links: unknown[] = [];
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0 && links.length < MAX_CHAIN_LINKS) {
    const link = queue.shift();
    if (link === undefined || link === null) continue;
    if (typeof link === 'object' || typeof link === 'function') {
      if (seen.has(link)) continue;
      seen.add(link);
    }
    links.push(link);
    const cause = readProperty(link, 'cause');
    if (cause !== undefined) queue.push(cause);
    const members = readProperty(link, 'errors');
    if (isArraySafely(members)) {
      // Read member by member: an array-like proxy may throw on any index.
      const count = Math.min(Number(readProperty(members, 'length')) || 0, MAX_CHAIN_LINKS);
      for (let index = 0; index < count; index++) {
        const member = readProperty(members, String(index));
        if (member !== undefined) queue.push(member);
      }
    }
  }
  return links;
}

/** Reads `value[key]` without letting a throwing getter or a hostile proxy escape. */
export function readProperty(value: unknown, key: string): unknown {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return undefined;
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

/** Reads a string property, or undefined when it is missing or not a string. */
export function readString(value: unknown, key: string): string | undefined {
  const property = readProperty(value, key);
  return typeof property === 'string' ? property : undefined;
}

/** The name a thrown value goes by: its `name` when that is specific, else its class name. */
export function errorNames(value: unknown): string[] {
  const names: string[] = [];
  const name = readString(value, 'name');
  if (name !== undefined) names.push(name);
  const constructorName = readString(readProperty(value, 'constructor'), 'name');
  if (constructorName !== undefined && constructorName !== name) names.push(constructorName);
  return names;
}

/** A short text for any thrown value: its message, or the value itself for strings and other primitives. */
export function messageOf(value: unknown): string {
  if (typeof value === 'string') return value;
  const message = readString(value, 'message');
  if (message !== undefined) return message;
  if (typeof value === 'object' && value !== null) {
    try {
      return JSON.stringify(value)?.slice(0, 500) ?? 'unknown error';
    } catch {
      // A cycle, a BigInt, a proxy whose traps throw, a getter that throws.
      return 'a thrown object that cannot be read or shown as JSON';
    }
  }
  return String(value);
}
