// Reading values keel did not make. A thrown value can be a revoked proxy (every operation on it throws, even
// `Array.isArray` and `instanceof`), a proxy whose traps throw, or an object whose getters throw; code that examines
// one inside a catch block or a promise callback must not throw in turn, or the failure it handles is lost (and a
// pending promise may never settle). Each reader here answers as if the value lacked what could not be read.

/** True when `value[brand] === true`; false for primitives and for values that cannot be read. */
export function hasBrand(value: unknown, brand: symbol): boolean {
  if (typeof value !== 'object' || value === null) return false;
  try {
    return (value as Record<symbol, unknown>)[brand] === true;
  } catch {
    return false;
  }
}

/** `Array.isArray(value)`, false for a revoked proxy instead of throwing. */
export function isArraySafely(value: unknown): value is unknown[] {
  try {
    return Array.isArray(value);
  } catch {
    return false;
  }
}

/** `value instanceof type`, false when the prototype chain cannot be read instead of throwing. */
export function isInstanceSafely<T>(value: unknown, type: abstract new (...args: never[]) => T): value is T {
  try {
    return value instanceof type;
  } catch {
    return false;
  }
}

/** `String(value)`, or a description of its type when converting it throws. */
export function stringOf(value: unknown): string {
  try {
    return String(value);
  } catch {
    return `[${typeof value}]`;
  }
}
