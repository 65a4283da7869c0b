// Checks of single option values. Each takes the value and one object (so no two strings can be swapped), returns the
// value (or its default when it is undefined and a default is given) and otherwise throws `optionError`.
import { describeValue, type OptionPath, optionError, optionPathText } from './option-error.js';

/** What every check needs: where the option is, and its default. */
export interface OptionCheck<T> {
  /** What is being configured (`httpTool "fetch_page"`); the message starts with it. */
  where: string;
  /** The option's name; a dotted label (`limits.cpuSeconds`) is read as its path unless `path` is given. */
  option: string;
  /** The option's path within the options object; defaults to the parts of `option`. */
  path?: OptionPath;
  /** The value when the option is undefined. Without one, undefined is refused. */
  default?: T;
  /** Advice shown beside the message. */
  guidance?: string;
}

/** The largest delay a Node timer can wait, in milliseconds (2^31 - 1). */
export const MAX_TIMER_MS = 2_147_483_647;

function label(check: OptionCheck<unknown>): string {
  return check.path === undefined ? check.option : optionPathText(check.path);
}

function refuse(check: OptionCheck<unknown>, expected: string, value: unknown): never {
  throw optionError({
    where: check.where,
    option: check.option,
    ...(check.path === undefined ? {} : { path: check.path }),
    message: `${label(check)} must be ${expected}, got ${describeValue(value)}`,
    ...(check.guidance === undefined ? {} : { guidance: check.guidance }),
  });
}

function unitOf(option: string): string {
  return option.endsWith('Ms') ? ' of milliseconds' : option.endsWith('Bytes') ? ' of bytes' : '';
}

function rangeText(min: number | undefined, max: number | undefined): string {
  const low = min ?? Number.NEGATIVE_INFINITY;
  const high = max ?? Number.POSITIVE_INFINITY;
  if (high === Number.POSITIVE_INFINITY || high === Number.MAX_SAFE_INTEGER) {
    if (low === Number.NEGATIVE_INFINITY) return '';
    return low === Number.MIN_VALUE ? ' above 0' : ` >= ${low}`;
  }
  if (low === Number.NEGATIVE_INFINITY) return ` <= ${high}`;
  return low === Number.MIN_VALUE ? ` above 0 and at most ${high}` : ` from ${low} to ${high}`;
}

/** {@link requireInteger}'s bounds. */
export interface IntegerCheck extends OptionCheck<number> {
  /** The smallest accepted value. Defaults to no bound. */
  min?: number;
  /** The largest accepted value. Defaults to no bound (`Number.MAX_SAFE_INTEGER`). */
  max?: number;
  /** Accept `Infinity` too ("no limit"). Defaults to false. */
  allowInfinity?: boolean;
  /** Describe options named `...Ms` / `...Bytes` with their unit (`an integer of milliseconds`). Defaults to true. */
  unit?: boolean;
}

/**
 * An integer from `min` to `max`; options named `...Ms` or `...Bytes` are described with their unit.
 *
 * @example
 *   const timeoutMs = requireInteger(options.timeoutMs, { where, option: 'timeoutMs', min: 1, max: 60_000, default: 30_000 });
 */
export function requireInteger(value: unknown, check: IntegerCheck): number {
  if (value === undefined && check.default !== undefined) return check.default;
  const whole =
    Number.isInteger(value) || (check.allowInfinity === true && value === Number.POSITIVE_INFINITY);
  const number = value as number;
  if (
    typeof value !== 'number' ||
    !whole ||
    number < (check.min ?? -Infinity) ||
    number > (check.max ?? Infinity)
  ) {
    const orInfinity = check.allowInfinity === true ? ' (or Infinity)' : '';
    return refuse(
      check,
      `an integer${check.unit === false ? '' : unitOf(check.option)}${rangeText(check.min, check.max)}${orInfinity}`,
      value,
    );
  }
  return number;
}

/** {@link requireNumber}'s bounds. */
export interface NumberCheck extends OptionCheck<number> {
  /** The smallest accepted value (`Number.MIN_VALUE` for "above 0"). Defaults to no bound. */
  min?: number;
  /** The largest accepted value. Defaults to no bound. */
  max?: number;
  /** Refuse Infinity. Defaults to false. NaN is always refused. */
  finite?: boolean;
}

/** A number from `min` to `max` (NaN never; Infinity unless `finite` or `max` excludes it). */
export function requireNumber(value: unknown, check: NumberCheck): number {
  if (value === undefined && check.default !== undefined) return check.default;
  const number = value as number;
  if (
    typeof value !== 'number' ||
    !(number >= (check.min ?? -Infinity) && number <= (check.max ?? Infinity)) ||
    (check.finite === true && !Number.isFinite(number))
  ) {
    const finite = check.finite === true && check.max === undefined ? 'finite ' : '';
    return refuse(check, `a ${finite}number${unitOf(check.option)}${rangeText(check.min, check.max)}`, value);
  }
  return number;
}

/**
 * A whole number of milliseconds from `min` (0 unless given) to `max` (the longest a timer can wait,
 * {@link MAX_TIMER_MS}, unless given).
 */
export function requireMilliseconds(value: unknown, check: IntegerCheck): number {
  return requireInteger(value, { ...check, min: check.min ?? 0, max: check.max ?? MAX_TIMER_MS });
}

/** {@link requireString}'s rules. */
export interface StringCheck extends OptionCheck<string> {
  /** Refuse the empty string. Defaults to false. */
  nonEmpty?: boolean;
  /** An example shown in the message (`https://api.example.com`). */
  example?: string;
}

/** A string (non-empty when `nonEmpty` is set). */
export function requireString(value: unknown, check: StringCheck): string {
  if (value === undefined && check.default !== undefined) return check.default;
  if (typeof value !== 'string' || (check.nonEmpty === true && value === '')) {
    const such = check.example === undefined ? '' : ` such as ${check.example}`;
    return refuse(check, `a ${check.nonEmpty === true ? 'non-empty ' : ''}string${such}`, value);
  }
  return value;
}

/** true or false. */
export function requireBoolean(value: unknown, check: OptionCheck<boolean>): boolean {
  if (value === undefined && check.default !== undefined) return check.default;
  if (typeof value !== 'boolean') return refuse(check, 'true or false', value);
  return value;
}

/** One of `choices` (compared with `===`). */
export function requireOneOf<const T extends string | number | boolean>(
  value: unknown,
  choices: readonly T[],
  check: OptionCheck<T>,
): T {
  if (value === undefined && check.default !== undefined) return check.default;
  if (!choices.includes(value as T)) {
    return refuse(check, `one of ${choices.map((choice) => JSON.stringify(choice)).join(', ')}`, value);
  }
  return value as T;
}

/** {@link requireStringArray}'s rules. */
export interface StringArrayCheck extends OptionCheck<readonly string[]> {
  /** Refuse an empty array. Defaults to false. */
  nonEmpty?: boolean;
}

/** An array of strings; the item at fault is named by its path (`['allow', 2]`). Returns a copy. */
export function requireStringArray(value: unknown, check: StringArrayCheck): string[] {
  if (value === undefined && check.default !== undefined) return [...check.default];
  if (!Array.isArray(value) || (check.nonEmpty === true && value.length === 0)) {
    return refuse(check, `${check.nonEmpty === true ? 'a non-empty' : 'an'} array of strings`, value);
  }
  const base = check.path ?? [check.option];
  for (const [index, item] of value.entries()) {
    if (typeof item !== 'string') refuse({ ...check, path: [...base, index] }, 'a string', item);
  }
  return [...(value as string[])];
}

/** {@link requireFunction}'s description. */
export interface FunctionCheck<T> extends OptionCheck<T> {
  /** The expected signature, shown in the message (`(error) => boolean`). */
  signature?: string;
}

/** A function. */
export function requireFunction<T>(value: unknown, check: FunctionCheck<T>): T {
  if (value === undefined && check.default !== undefined) return check.default;
  if (typeof value !== 'function') {
    return refuse(check, `a function${check.signature === undefined ? '' : ` ${check.signature}`}`, value);
  }
  return value as T;
}

/** The methods {@link requireClock} looks for (core's `Clock` has them). */
export interface ClockShape {
  now(): number;
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: never): void;
}

/** A clock: `now`, `setTimeout` and `clearTimeout` must all be functions. */
export function requireClock<C extends ClockShape>(value: unknown, check: OptionCheck<C>): C {
  if (value === undefined && check.default !== undefined) return check.default;
  const clock = value as Partial<ClockShape> | null | undefined;
  if (
    typeof clock !== 'object' ||
    clock === null ||
    typeof clock.now !== 'function' ||
    typeof clock.setTimeout !== 'function' ||
    typeof clock.clearTimeout !== 'function'
  ) {
    return refuse(check, 'a Clock with now(), setTimeout() and clearTimeout() methods', value);
  }
  return clock as C;
}
