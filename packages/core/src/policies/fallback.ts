import { classify } from '../errors/classify.js';
import { isControlSignal } from '../errors/control.js';
import { type JsonValue, KeelError } from '../errors/keel-error.js';
import { optionError } from '../options/option-error.js';
import { toContext } from './context.js';
import { Emitter } from './events.js';
import type { Event, PolicyContext, PolicyFunction, SignalInput } from './policy.js';
import { rejectUnknownOptions, requireOptionsObject } from './validate.js';

/** One alternative of a {@link fallback}: tried, in order, when the previous attempt failed and `when` matches. */
export interface FallbackAlternative<Result> {
  /** Names the alternative in events and in the final error. Defaults to `fallback <position>` (1-based). */
  name?: string;
  /**
   * Whether this alternative should answer `error` (the most recent failure). Defaults to the policy's `when`,
   * which defaults to every error.
   */
  when?: (error: KeelError) => boolean;
  /** Produces the result instead. Receives the caller's context and the most recent failure. */
  run: (context: PolicyContext, error: KeelError) => PromiseLike<Result> | Result;
}

/** Options of {@link fallback}. */
export interface FallbackOptions {
  /** The condition for alternatives that have no `when` of their own. Defaults to every error. */
  when?: (error: KeelError) => boolean;
  /**
   * Turns a thrown value into the KeelError that `when` and the final error see. Defaults to `classify` from the
   * errors layer (a KeelError stays as it is; anything else gets its code from status, body, system code or message,
   * with the original as `cause`).
   */
  classify?: (error: unknown) => KeelError;
}

/** Emitted before an alternative runs. */
export interface FallbackEvent {
  /** The alternative's name. */
  readonly name: string;
  /** Its position among the alternatives, from 1. */
  readonly position: number;
  /** The failure it answers. */
  readonly error: KeelError;
}

/** One failed step of a fallback chain, as stored in the final error's `data.failures`. */
export interface FallbackFailure {
  /** `primary`, or the alternative's name. */
  readonly name: string;
  readonly code: string;
  readonly message: string;
}

/**
 * A fallback chain. Its results are the function's own or an alternative's, hence `Promise<T | Alternative>`.
 */
export interface FallbackPolicy<Alternative> {
  execute<T>(fn: PolicyFunction<T>, signal?: SignalInput): Promise<T | Alternative>;
  /** Fires before each alternative runs. */
  readonly onFallback: Event<FallbackEvent>;
  /** Type-level only, never set: what the policy may resolve with besides the function's result (see `compose`). */
  readonly alternativeResult?: () => Alternative;
}

interface Step<Result> {
  name: string;
  when: (error: KeelError) => boolean;
  run: (context: PolicyContext, error: KeelError) => PromiseLike<Result> | Result;
}

const everyError = (): boolean => true;
const defaultClassify = (error: unknown): KeelError => classify(error);

/**
 * Tries the function given to `execute` (the primary), then each alternative in order whose `when` matches the
 * latest failure, until one succeeds.
 *
 * - No alternative matched: the primary's thrown value is rethrown exactly as it was.
 * - Alternatives ran and all failed: a KeelError with the last failure's code, retryability and `retryAfterMs`, the
 *   last failure as `cause`, and the whole chain in `data.failures` (`[{ name, code, message }]`, primary first).
 * - Cancellation (the caller's signal aborted) ends the chain with the signal's reason; a thrown control signal, and
 *   any failure classified as `run.cancelled` (an AbortError from elsewhere), is rethrown untouched: none is ever
 *   replaced by an alternative.
 *
 * Each step settles once (promises settle once), so an inner timeout followed by the primary's late rejection can
 * never run an alternative twice.
 *
 * @example
 *   const withBackup = fallback([
 *     { name: 'haiku', when: (error) => error.category === 'provider', run: ({ signal }, error) => haiku(request, signal) },
 *   ]);
 *   const response = await withBackup.execute(({ signal }) => gpt(request, signal), callerSignal);
 */
export function fallback<Alternative>(
  alternatives: ReadonlyArray<
    | FallbackAlternative<Alternative>
    | ((context: PolicyContext, error: KeelError) => PromiseLike<Alternative> | Alternative)
  >,
  options: FallbackOptions = {},
): FallbackPolicy<Alternative> {
  const { steps, classifyError } = validate(alternatives, options);
  const fallbacks = new Emitter<FallbackEvent>();

  const execute = async <T>(fn: PolicyFunction<T>, signal?: SignalInput): Promise<T | Alternative> => {
    const context = toContext(signal);
    if (context.aborted) throw context.signal.reason;
    let thrown: unknown;
    try {
      return await fn(context);
    } catch (error) {
      thrown = error;
    }
    passControl(thrown, context);
    let latest = classifyError(thrown);
    if (latest.code === 'run.cancelled') throw thrown;
    const failures: FallbackFailure[] = [{ name: 'primary', code: latest.code, message: latest.message }];
    let ran = false;
    for (let position = 1; position <= steps.length; position++) {
      const step = steps[position - 1]!;
      if (!step.when(latest)) continue;
      ran = true;
      if (fallbacks.hasListeners) fallbacks.emit({ name: step.name, position, error: latest });
      try {
        return await step.run(context, latest);
      } catch (error) {
        passControl(error, context);
        latest = classifyError(error);
        if (latest.code === 'run.cancelled') throw error;
        failures.push({ name: step.name, code: latest.code, message: latest.message });
      }
    }
    if (!ran) throw thrown;
    throw chainError(latest, failures);
  };

  return { execute, onFallback: fallbacks.event };
}

/** Rethrows what must pass untouched: a control signal as it is, any failure after cancellation as the reason. */
function passControl(error: unknown, context: PolicyContext): void {
  if (isControlSignal(error)) throw error;
  if (context.aborted) throw context.signal.reason;
}

function chainError(last: KeelError, failures: FallbackFailure[]): KeelError {
  const summary = failures
    .map((failure) => `${failure.name} (${failure.code}: ${failure.message})`)
    .join('; ');
  return new KeelError(last.code, `every fallback failed: ${summary}`, {
    retryable: last.retryable,
    retryAfterMs: last.retryAfterMs,
    status: last.status,
    provider: last.provider,
    data: { failures: failures.map((failure) => ({ ...failure })) as JsonValue[] },
    cause: last,
  });
}

const FACTORY = 'fallback';

function validate<Alternative>(
  alternatives: ReadonlyArray<
    | FallbackAlternative<Alternative>
    | ((context: PolicyContext, error: KeelError) => PromiseLike<Alternative> | Alternative)
  >,
  options: FallbackOptions,
): { steps: Step<Alternative>[]; classifyError: (error: unknown) => KeelError } {
  if (!Array.isArray(alternatives) || alternatives.length === 0) {
    throw optionError({
      where: FACTORY,
      option: 'alternatives',
      message: 'alternatives must be a non-empty array of { name?, when?, run } or functions',
    });
  }
  requireOptionsObject(options, FACTORY, '{ when: (error) => error.retryable }');
  rejectUnknownOptions(options, ['when', 'classify'], FACTORY);
  const defaultWhen = options.when ?? everyError;
  if (typeof defaultWhen !== 'function') {
    throw optionError({
      where: FACTORY,
      option: 'when',
      message: 'options.when must be a function (error) => boolean',
    });
  }
  const classifier = options.classify ?? defaultClassify;
  if (typeof classifier !== 'function') {
    throw optionError({
      where: FACTORY,
      option: 'classify',
      message: 'options.classify must be a function (error) => KeelError',
    });
  }
  const steps = alternatives.map((alternative, index): Step<Alternative> => {
    const fallbackName = `fallback ${index + 1}`;
    const option = `alternatives[${index}]`;
    if (typeof alternative === 'function') return { name: fallbackName, when: defaultWhen, run: alternative };
    if (typeof alternative !== 'object' || alternative === null || typeof alternative.run !== 'function') {
      throw optionError({
        where: FACTORY,
        option: option,
        message: `${option} must be a function or an object with a run function`,
      });
    }
    rejectUnknownOptions(alternative, ['name', 'when', 'run'], `${FACTORY} ${option}`);
    const { name = fallbackName, when = defaultWhen, run } = alternative;
    if (typeof name !== 'string' || name === '') {
      throw optionError({
        where: FACTORY,
        option: `${option}.name`,
        message: `${option}.name must be a non-empty string`,
      });
    }
    if (typeof when !== 'function') {
      throw optionError({
        where: FACTORY,
        option: `${option}.when`,
        message: `${option}.when must be a function (error) => boolean`,
      });
    }
    return { name, when, run };
  });
  return { steps, classifyError: classifier };
}
