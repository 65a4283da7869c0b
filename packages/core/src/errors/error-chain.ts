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
    if (Array.isArray(members)) queue.push(...members.slice(0, MAX_CHAIN_LINKS));
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
      return 'unknown error';
    }
  }
  return String(value);
}
