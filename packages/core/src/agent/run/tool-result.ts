import { type JsonValue, KeelError } from '../../errors/keel-error.js';
import type { ToolDegradation, ToolResult } from '../../spec/tool.js';

/** Longest tool message the model is sent by default, in characters (UTF-16 code units): 32 KiB. */
export const DEFAULT_TOOL_RESULT_MAX_CHARS = 32_768;
/** The smallest `maxChars` accepted: room for an error's code, message and guidance. */
const MIN_TOOL_RESULT_MAX_CHARS = 1_024;
/** Caps on an error's message and guidance when an error result must be shortened. */
const ERROR_TEXT_CAP_CHARS = 2_000;
/** Cap on a degraded result's reason, so that it always fits beside truncated content. */
const DEGRADED_REASON_CAP_CHARS = 500;
const MAX_CONTENT_DEPTH = 64;

/** A successful {@link ToolResult}. */
export type ToolSuccessResult = Extract<ToolResult, { status: 'success' }>;
/** A failed {@link ToolResult}. */
export type ToolErrorResult = Extract<ToolResult, { status: 'error' }>;

/**
 * A successful tool result. `content` is turned into JSON: `undefined` becomes `null`, bigints become strings,
 * `toJSON` is honoured, functions and symbols are dropped, and cycles or nesting deeper than 64 levels are replaced
 * by a marker string, so any value a tool returns can be shown to the model and checkpointed. `degraded` marks a
 * result a fallback produced after the tool failed.
 */
export function toolSuccess(content: unknown, degraded?: ToolDegradation): ToolSuccessResult {
  const json = toJsonValue(content, 0, []);
  return degraded === undefined
    ? { status: 'success', content: json }
    : { status: 'success', content: json, degraded: { ...degraded } };
}

/**
 * A failed tool result, as the model sees it. `guidance` tells the model what to do next; it defaults to the
 * error's own `guidance`.
 */
export function toolError(error: KeelError, guidance?: string): ToolErrorResult {
  if (!KeelError.isInstance(error)) {
    throw new KeelError('config.invalid', 'toolError needs a KeelError: classify the thrown value first');
  }
  const text = guidance ?? error.guidance;
  return text === undefined
    ? { status: 'error', error: error.toJSON() }
    : { status: 'error', error: error.toJSON(), guidance: text };
}

/** Options of {@link renderToolResult}. */
export interface RenderToolResultOptions {
  /** Longest content, in characters; longer output is cut and marked as truncated. Defaults to 32,768; at least 1,024. */
  maxChars?: number;
}

/** A tool result rendered as the content of the `tool` message. */
export interface RenderedToolResult {
  /** The JSON text the model reads. */
  content: string;
  isError: boolean;
  /** Whether the output was cut to fit `maxChars` (the content then says so too, with the original size). */
  truncated: boolean;
  /** Length of the untruncated rendering, in characters. */
  originalChars: number;
}

/**
 * Renders a tool result as the JSON text of a `tool` message:
 * `{"status":"success","content":...}` (with `"degraded":{"from","to","errorCode","reason"}` after it when a fallback
 * answered) or
 * `{"status":"error","error":{"code","message","retryable","data"},"guidance":...}` (causes stay in the run's
 * report, not in the model's context). Output over `maxChars` is never cut silently: a success's content is replaced
 * by its first characters as a string, with `"truncated":true` and a note giving the original size; an error drops
 * its data and shortens its message and guidance.
 *
 * @example
 *   renderToolResult(toolSuccess({ temperatureC: 21 })).content; // '{"status":"success","content":{"temperatureC":21}}'
 */
export function renderToolResult(
  result: ToolResult,
  options: RenderToolResultOptions = {},
): RenderedToolResult {
  const maxChars = options.maxChars ?? DEFAULT_TOOL_RESULT_MAX_CHARS;
  if (!Number.isInteger(maxChars) || maxChars < MIN_TOOL_RESULT_MAX_CHARS) {
    throw new KeelError(
      'config.invalid',
      `maxChars must be an integer of at least ${MIN_TOOL_RESULT_MAX_CHARS}`,
    );
  }
  const isError = result.status === 'error';
  const view = isError
    ? errorView(result.error, result.guidance)
    : withDegradation({ status: 'success', content: result.content }, result.degraded);
  const content = JSON.stringify(view);
  if (content.length <= maxChars)
    return { content, isError, truncated: false, originalChars: content.length };
  const shortened = isError
    ? JSON.stringify({
        ...errorView(result.error, result.guidance, true),
        truncated: true,
        note: `The error was shortened from ${content.length} characters; its data was dropped.`,
      })
    : truncateSuccess(result.content, content.length, maxChars, result.degraded);
  return { content: shortened, isError, truncated: true, originalChars: content.length };
}

function errorView(
  error: ToolErrorResult['error'],
  guidance: string | undefined,
  shorten = false,
): Record<string, JsonValue> {
  const cap = (text: string) =>
    shorten && text.length > ERROR_TEXT_CAP_CHARS
      ? `${cutAt(text, ERROR_TEXT_CAP_CHARS)}... [truncated]`
      : text;
  const view: Record<string, JsonValue> = { code: error.code ?? 'tool.failed', message: cap(error.message) };
  if (error.retryable !== undefined) view.retryable = error.retryable;
  if (!shorten && error.data !== undefined) view.data = error.data;
  const result: Record<string, JsonValue> = { status: 'error', error: view };
  if (guidance !== undefined) result.guidance = cap(guidance);
  return result;
}

/** A success view with the degradation, when there is one, after the content. */
function withDegradation(
  view: Record<string, JsonValue>,
  degraded: ToolDegradation | undefined,
): Record<string, JsonValue> {
  if (degraded === undefined) return view;
  const { from, to, errorCode, reason } = degraded;
  return { ...view, degraded: { from, to, errorCode, reason: cutAt(reason, DEGRADED_REASON_CAP_CHARS) } };
}

function truncateSuccess(
  content: JsonValue,
  originalChars: number,
  maxChars: number,
  degraded: ToolDegradation | undefined,
): string {
  const text = typeof content === 'string' ? content : JSON.stringify(content);
  const render = (kept: string) =>
    JSON.stringify(
      withDegradation(
        {
          status: 'success',
          truncated: true,
          note: `Output truncated: showing the first ${kept.length} of ${text.length} characters (${originalChars} rendered). Ask for less (a filter, a page, a range) if you need the rest.`,
          content: kept,
        },
        degraded,
      ),
    );
  // Escaping can lengthen the kept text, so shrink until the rendering fits; a few rounds always suffice.
  let keep = maxChars - render('').length - 16;
  for (let round = 0; round < 8; round++) {
    const rendered = render(cutAt(text, Math.max(0, keep)));
    if (rendered.length <= maxChars) return rendered;
    keep -= rendered.length - maxChars + Math.ceil(keep * 0.1);
  }
  return render('');
}

/** The first `length` characters of `text`, never splitting a surrogate pair. */
function cutAt(text: string, length: number): string {
  if (text.length <= length) return text;
  const code = text.charCodeAt(length - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? length - 1 : length);
}

/** `ancestors`: the objects being converted above this one, to cut cycles (a short stack: depth is capped). */
function toJsonValue(value: unknown, depth: number, ancestors: object[]): JsonValue {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : String(value);
    case 'bigint':
      return value.toString();
    case 'function':
    case 'symbol':
      return null;
  }
  if (depth >= MAX_CONTENT_DEPTH) return '[too deep]';
  const object = value as object;
  if (ancestors.includes(object)) return '[circular]';
  const toJSON = (object as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return toJsonValue(toJSON.call(object), depth + 1, ancestors);
  ancestors.push(object);
  try {
    if (Array.isArray(object)) return object.map((item) => toJsonValue(item, depth + 1, ancestors));
    if (object instanceof Map) return toJsonValue(Object.fromEntries(object), depth + 1, ancestors);
    if (object instanceof Set) return toJsonValue([...object], depth + 1, ancestors);
    if (object instanceof Error) return { name: object.name, message: object.message };
    const result: Record<string, JsonValue> = {};
    // for...in with an own-property check visits what Object.entries would, without building the entries.
    for (const key in object) {
      if (!Object.hasOwn(object, key)) continue;
      const item = (object as Record<string, unknown>)[key];
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
      result[key] = toJsonValue(item, depth + 1, ancestors);
    }
    return result;
  } finally {
    ancestors.pop();
  }
}
