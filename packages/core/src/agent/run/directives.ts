import { CONTROL_SIGNAL } from '../../errors/control.js';
import { type JsonValue, KeelError } from '../../errors/keel-error.js';

const DIRECTIVE = Symbol.for('keel.directive');

/** Longest guidance or reason text a directive carries; longer text is rejected rather than cut silently. */
const MAX_DIRECTIVE_TEXT_CHARS = 10_000;

/**
 * Asks the run loop to run the model step again, with `guidance` added to the conversation for the model (the
 * Agno `RetryAgentRun` idea, as a typed value). A control signal: no retry policy, breaker or fallback treats it as
 * a failure. Build one with {@link retryStep}.
 */
export class RetryStep extends Error {
  readonly [CONTROL_SIGNAL] = true as const;
  readonly [DIRECTIVE] = 'retry-step' as const;
  readonly kind = 'retry-step' as const;
  readonly guidance: string;

  constructor(guidance: string) {
    super(`A tool asked to retry the step: ${guidance}`);
    this.name = 'RetryStep';
    this.guidance = guidance;
  }
}

/**
 * Asks the run loop to stop the run now, as completed, with `reason` recorded as the stop reason's detail and
 * `output` (when given) as the run's output. A control signal, like {@link RetryStep}. Build one with {@link stopRun}.
 */
export class StopRun extends Error {
  readonly [CONTROL_SIGNAL] = true as const;
  readonly [DIRECTIVE] = 'stop-run' as const;
  readonly kind = 'stop-run' as const;
  readonly reason: string;
  readonly output: JsonValue | undefined;

  constructor(reason: string, output?: JsonValue) {
    super(`A tool asked to stop the run: ${reason}`);
    this.name = 'StopRun';
    this.reason = reason;
    this.output = output;
  }
}

/**
 * What a tool's {@link StopRun} asked for, as plain JSON: kept on the call (in checkpoints and the ledger) so that a
 * run resumed after the call completed still stops as the tool asked.
 */
export interface ToolStop {
  readonly reason: string;
  readonly output?: JsonValue;
}

/** A directive a tool throws (or returns) to steer the run loop. */
export type Directive = RetryStep | StopRun;

/**
 * A directive asking the loop to run the model step again with `guidance` for the model. Throw it (or return it)
 * from a tool's `execute`. Throws `config.invalid` when `guidance` is empty or over 10,000 characters.
 *
 * @example
 *   async execute({ query }) {
 *     if (query.length < 3) throw retryStep('The query is too short: ask the user what to search for.');
 *     return search(query);
 *   }
 */
export function retryStep(guidance: string): RetryStep {
  return new RetryStep(checkText(guidance, 'retryStep guidance'));
}

/**
 * A directive asking the loop to end the run now as completed: `reason` says why (it lands in the report), `output`
 * (a JSON value, optional) becomes the run's output. Throw it (or return it) from a tool's `execute`. Throws
 * `config.invalid` when `reason` is empty or over 10,000 characters, or `output` is not JSON.
 *
 * @example
 *   async execute({ orderId }) {
 *     const order = await placeOrder(orderId);
 *     throw stopRun('order placed', { orderId: order.id });
 *   }
 */
export function stopRun(reason: string, output?: JsonValue): StopRun {
  const text = checkText(reason, 'stopRun reason');
  if (output !== undefined && !isJson(output, 0)) {
    throw new KeelError(
      'config.invalid',
      'stopRun output must be a JSON value (string, number, boolean, null, array or plain object)',
    );
  }
  return new StopRun(text, output);
}

/** True when `value` is a {@link RetryStep}, even from another copy of keel. */
export function isRetryStep(value: unknown): value is RetryStep {
  return directiveKind(value) === 'retry-step';
}

/** True when `value` is a {@link StopRun}, even from another copy of keel. */
export function isStopRun(value: unknown): value is StopRun {
  return directiveKind(value) === 'stop-run';
}

/** True when `value` is any directive. */
export function isDirective(value: unknown): value is Directive {
  return directiveKind(value) !== undefined;
}

function directiveKind(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  let kind: unknown;
  try {
    kind = (value as Record<symbol, unknown>)[DIRECTIVE];
  } catch {
    // A thrown value that cannot be read (a revoked proxy, a throwing getter) is a failure, not a directive.
    return undefined;
  }
  return kind === 'retry-step' || kind === 'stop-run' ? kind : undefined;
}

function checkText(text: unknown, name: string): string {
  if (typeof text !== 'string' || text.trim() === '') {
    throw new KeelError('config.invalid', `${name} must be a non-empty string`);
  }
  if (text.length > MAX_DIRECTIVE_TEXT_CHARS) {
    throw new KeelError(
      'config.invalid',
      `${name} is ${text.length} characters long; keep it under ${MAX_DIRECTIVE_TEXT_CHARS}`,
    );
  }
  return text;
}

function isJson(value: unknown, depth: number): boolean {
  if (depth > 64) return false;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every((item) => isJson(item, depth + 1));
  if (typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return false;
  return Object.values(value).every((item) => isJson(item, depth + 1));
}
