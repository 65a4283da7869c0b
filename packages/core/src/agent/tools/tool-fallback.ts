import { ERROR_CODES, type ErrorCategory, isErrorCode } from '../../errors/codes.js';
import type { KeelError } from '../../errors/keel-error.js';
import { optionError } from '../../options/option-error.js';
import { rejectUnknownOptions } from '../../policies/validate.js';
import type { ToolFallback, ToolFallbackCondition } from '../../spec/tool.js';

const CATEGORIES: ReadonlySet<string> = new Set(Object.values(ERROR_CODES).map((entry) => entry.category));

/** The name a value fallback gets when it has none. */
export const DEFAULT_FALLBACK_VALUE_NAME = 'fallback value';

/**
 * Whether `fallback` answers `error`. A fallback that says nothing (`on` unset) answers every failure of the tool,
 * whatever its code: a plain `new Error('weather service 503')` (`tool.failed`) as much as a timeout or an open
 * breaker. Control signals (cancellation, interrupts, a tool's request to stop) never get here: they end the call
 * before any fallback is considered.
 */
export function fallbackApplies(fallback: ToolFallback<never>, error: KeelError): boolean {
  const on = fallback.on;
  if (on === undefined) return true;
  if (typeof on === 'function') return on(error) === true;
  return on.some((entry) => entry === error.code || entry === (error.category as ErrorCategory));
}

/** The name a fallback goes by in `degraded.to`, events and the report. */
export function fallbackName(fallback: ToolFallback<never>): string {
  return fallback.tool?.name ?? fallback.name ?? DEFAULT_FALLBACK_VALUE_NAME;
}

/**
 * Checks a tool's `fallbacks` option, throwing `config.invalid` with what to fix: each entry must be `{ tool }` or
 * `{ value }`, with `on` a list of error codes and categories or a function, and `reason` a non-empty string. A
 * fallback tool may not be the tool itself, nor need approval (a fallback runs without asking).
 */
export function checkFallbacks(
  fallbacks: unknown,
  label: string,
  toolName: string,
): readonly ToolFallback[] | undefined {
  if (fallbacks === undefined) return undefined;
  if (!Array.isArray(fallbacks)) {
    throw optionError({
      where: label,
      option: 'fallbacks',
      message: 'fallbacks must be an array such as [{ tool: replica }, { value: () => cached }]',
    });
  }
  return fallbacks.map((entry: unknown, index): ToolFallback => {
    const where = `fallbacks[${index}]`;
    if (typeof entry !== 'object' || entry === null)
      throw optionError({
        where: label,
        option: 'fallbacks',
        message: `${where} must be { tool } or { value }`,
      });
    rejectUnknownOptions(entry, ['on', 'reason', 'tool', 'value', 'name'], `${label} ${where}`);
    const { on, reason, tool, value, name } = entry as Record<string, unknown>;
    if ((tool === undefined) === (value === undefined)) {
      throw optionError({
        where: label,
        option: 'fallbacks',
        message: `${where} needs exactly one of tool (another tool) and value (a function)`,
      });
    }
    if (tool !== undefined) {
      const candidate = tool as {
        name?: unknown;
        execute?: unknown;
        validate?: unknown;
        needsApproval?: unknown;
      };
      if (typeof candidate !== 'object' || candidate === null || typeof candidate.execute !== 'function') {
        throw optionError({
          where: label,
          option: 'fallbacks',
          message: `${where}.tool is not a tool: build it with tool({...})`,
        });
      }
      if (candidate.name === toolName)
        throw optionError({ where: label, option: 'fallbacks', message: `${where}.tool is the tool itself` });
      if (candidate.needsApproval !== undefined && candidate.needsApproval !== false) {
        throw optionError({
          where: label,
          option: 'fallbacks',
          message: `${where}.tool "${String(candidate.name)}" needs approval; a fallback runs without asking`,
        });
      }
      if (name !== undefined)
        throw optionError({
          where: label,
          option: 'fallbacks',
          message: `${where}.name is for value fallbacks; a tool goes by its own name`,
        });
    } else if (typeof value !== 'function') {
      throw optionError({
        where: label,
        option: 'fallbacks',
        message: `${where}.value must be a function (input, context) => value`,
      });
    }
    if (name !== undefined && (typeof name !== 'string' || name.trim() === '')) {
      throw optionError({
        where: label,
        option: 'fallbacks',
        message: `${where}.name must be a non-empty string`,
      });
    }
    if (reason !== undefined && (typeof reason !== 'string' || reason.trim() === '')) {
      throw optionError({
        where: label,
        option: 'fallbacks',
        message: `${where}.reason must be a non-empty string`,
      });
    }
    checkCondition(on, label, where);
    return Object.freeze({ ...(entry as ToolFallback) });
  });
}

function checkCondition(
  on: unknown,
  label: string,
  where: string,
): asserts on is ToolFallbackCondition | undefined {
  if (on === undefined || typeof on === 'function') return;
  if (!Array.isArray(on) || on.length === 0) {
    throw optionError({
      where: label,
      option: 'fallbacks',
      message: `${where}.on must be a non-empty array of error codes and categories, or a function`,
    });
  }
  for (const entry of on) {
    if (typeof entry !== 'string' || !(isErrorCode(entry) || CATEGORIES.has(entry))) {
      throw optionError({
        where: label,
        option: 'fallbacks',
        message: `${where}.on: ${JSON.stringify(entry)} is neither an error code (such as 'tool.timeout') nor a category (such as 'network')`,
      });
    }
  }
}
