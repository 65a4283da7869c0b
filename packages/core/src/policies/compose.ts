import { KeelError } from '../errors/keel-error.js';
import { runInContext, toContext } from './context.js';
import type { Policy, PolicyFunction, SignalInput } from './policy.js';

/**
 * Anything with a policy's `execute`, including policies that may resolve with an alternative result (a
 * `fallback`): `compose` accepts them all.
 */
export interface ComposablePolicy {
  execute<T>(fn: PolicyFunction<T>, signal?: SignalInput): Promise<unknown>;
  /** Type-level only, never set: what the policy may resolve with besides the function's result. */
  readonly alternativeResult?: () => unknown;
}

/** The alternative results a list of policies may produce (`never` when none is a fallback). */
export type AlternativeResultOf<Policies extends readonly ComposablePolicy[]> =
  Policies[number] extends infer Each
    ? Each extends { readonly alternativeResult?: () => infer Alternative }
      ? Alternative
      : never
    : never;

/** Policies run as one: `execute` resolves with the function's result or any fallback's alternative. */
export interface ComposedPolicy<Alternative = never> {
  execute<T>(fn: PolicyFunction<T>, signal?: SignalInput): Promise<T | Alternative>;
  /** Type-level only, never set: what the policy may resolve with besides the function's result. */
  readonly alternativeResult?: () => Alternative;
  /** The composed policies, outermost first. */
  readonly policies: readonly ComposablePolicy[];
}

/**
 * The policy that adds nothing: it runs the function with the caller's context. A caller's signal that is already
 * aborted ends the call with its reason before the function runs.
 */
export const noop: Policy = {
  execute<T>(fn: PolicyFunction<T>, signal?: SignalInput): Promise<T> {
    const context = toContext(signal);
    if (context.aborted) return Promise.reject(context.signal.reason);
    return runInContext(fn, context);
  },
};

/**
 * Runs policies as one, the first outermost: `compose(fallback, retry, timeout)` retries timed calls and falls back
 * when the retries are spent. Each policy hands its context to the next one, so no AbortController is created
 * unless a policy or the function reads a signal. `compose()` is {@link noop}.
 *
 * @example
 *   const resilient = compose(fallback([backup]), retry({ maxAttempts: 3 }), timeout(10_000));
 *   const response = await resilient.execute(({ signal }) => model.generate(request, { signal }), callerSignal);
 */
export function compose(): ComposedPolicy;
export function compose<const Policies extends readonly ComposablePolicy[]>(
  ...policies: Policies
): ComposedPolicy<AlternativeResultOf<Policies>>;
export function compose(...policies: ComposablePolicy[]): ComposedPolicy<unknown> {
  policies.forEach((policy, index) => {
    if (typeof policy !== 'object' || policy === null || typeof policy.execute !== 'function') {
      throw new KeelError(
        'config.invalid',
        `compose: argument ${index + 1} is not a policy (an object with an execute function)`,
        { data: { option: `policies[${index}]` } },
      );
    }
  });
  const chain = Object.freeze([...policies]);
  const count = chain.length;
  if (count === 0) return { execute: noop.execute, policies: chain };

  const execute = <T>(fn: PolicyFunction<T>, signal?: SignalInput): Promise<unknown> => {
    const step = (index: number, context: SignalInput): Promise<unknown> => {
      const policy = chain[index]!;
      if (index === count - 1) return policy.execute(fn, context);
      return policy.execute((inner) => step(index + 1, inner), context);
    };
    return step(0, signal);
  };
  return { execute: execute as ComposedPolicy<unknown>['execute'], policies: chain };
}
