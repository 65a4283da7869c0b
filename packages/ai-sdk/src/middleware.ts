import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Middleware,
} from '@ai-sdk/provider';
import {
  type AgentBreakerOptions,
  type CircuitBreaker,
  type Clock,
  circuitBreaker,
  type Delay,
  type ErrorCode,
  KeelError,
  type RandomSource,
  type RetryBudget,
  retry,
  retryBudget,
  systemClock,
  type TimeoutPolicy,
  timeout,
} from '@keel/core';
import {
  countsAgainstModel,
  FALLBACK_CODES,
  isControlSignal,
  type PolicyContext,
  presentableError,
  rejectUnknownOptions,
  requireOptionsObject,
  underlyingError,
} from '@keel/core/adapter';
import { classifyAiSdkError } from './classify-error.js';
import { checkLanguageModel } from './language-model.js';
import { type CallState, type RunUnderPolicies, streamUnderPolicies } from './middleware-stream.js';

/** How {@link keelMiddleware} retries one model within one call. */
export interface KeelMiddlewareRetryOptions {
  /** Calls to one model within one call, the first included, before the middleware falls back. Defaults to 3. */
  maxAttempts?: number;
  /** The wait before each retry. Defaults to the retry policy's: full jitter over exponential 500 ms to 30 s. */
  delay?: Delay;
  /** Randomness for the delay's jitter. Defaults to `Math.random`. */
  random?: RandomSource;
  /** The longest Retry-After honoured; a longer one ends that model's retries (the middleware falls back). Defaults to 60_000. */
  maxRetryAfterMs?: number;
  /** Time after which a model's retries stop within one call. Defaults to none. */
  maxElapsedMs?: number;
}

/** Options of {@link keelMiddleware}. */
export interface KeelMiddlewareOptions {
  /**
   * The breaker per model (the wrapped model and each fallback, by provider and model id), kept by the middleware
   * across calls; `false` for none. Defaults to the breaker's defaults, except that `provider.auth` and
   * `provider.quota_exhausted` do not count as failures (the agent's rule, imported from `@keel/core/adapter`).
   */
  breaker?: AgentBreakerOptions | false;
  /** How each model is retried within one call. Defaults: see {@link KeelMiddlewareRetryOptions}. */
  retry?: KeelMiddlewareRetryOptions;
  /**
   * The budget every retry of every call through this middleware draws from; each call records one request in it.
   * Defaults to `retryBudget()` (a retry per five recent calls, plus 1 a second), one per middleware.
   */
  budget?: RetryBudget;
  /**
   * Longest one model request may take, in milliseconds, streaming included (`network.timeout`, retried). Defaults
   * to 120_000.
   */
  timeoutMs?: number;
  /**
   * Models tried in order when the one called is unavailable (rate limited, overloaded, failing, timing out, its
   * breaker open), each with its own retries and breaker. Every call starts from the wrapped model: an open breaker
   * sends calls on at once, without a request. Defaults to none.
   */
  fallbacks?: readonly LanguageModelV3[];
  /** Where time comes from (delays, timeouts, breakers). Defaults to the system clock. */
  clock?: Clock;
  /** Receives retries, fallbacks and breaker moves as they happen. Defaults to none. */
  onEvent?: (event: KeelMiddlewareEvent) => void;
}

/** What {@link keelMiddleware} reports. `model` is `<provider>/<model id>`. */
export type KeelMiddlewareEvent =
  | {
      readonly type: 'retry-scheduled';
      readonly atMs: number;
      readonly model: string;
      readonly attempt: number;
      readonly delayMs: number;
      readonly errorCode: ErrorCode;
    }
  | {
      readonly type: 'fallback';
      readonly atMs: number;
      readonly from: string;
      readonly to: string;
      readonly errorCode: ErrorCode;
    }
  | {
      readonly type: 'breaker-opened' | 'breaker-half-opened' | 'breaker-closed';
      readonly atMs: number;
      readonly model: string;
    };

const KNOWN_OPTIONS = Object.keys({
  breaker: true,
  retry: true,
  budget: true,
  timeoutMs: true,
  fallbacks: true,
  clock: true,
  onEvent: true,
} satisfies Record<keyof KeelMiddlewareOptions, true>);

const RETRY_OPTIONS = Object.keys({
  maxAttempts: true,
  delay: true,
  random: true,
  maxRetryAfterMs: true,
  maxElapsedMs: true,
} satisfies Record<keyof KeelMiddlewareRetryOptions, true>);

/**
 * keel's resilience for AI SDK users, as a language model middleware: a breaker per model, retries with backoff and
 * full jitter that honour Retry-After, one retry budget over every call, a timeout per request, and fallback to
 * other models, for `generateText`, `streamText` and everything else that calls a wrapped model.
 *
 * A call fails with a KeelError (the AI SDK's error as its `cause`): its `code` says what went wrong
 * (`provider.rate_limited`, `policy.circuit_open`, ...). The AI SDK retries only its own retryable errors, so it
 * never retries these and `maxRetries` cannot multiply keel's retries; set `maxRetries: 0` all the same, to say so.
 * A stream is retried, or falls back, only until its first output reaches the caller; a later failure arrives as
 * the stream's `error` part.
 *
 * @example
 *   import { generateText, wrapLanguageModel } from 'ai';
 *   const model = wrapLanguageModel({
 *     model: openai.chat('gpt-4.1-mini'),
 *     middleware: keelMiddleware({ fallbacks: [anthropic('claude-haiku-4-5')], timeoutMs: 60_000 }),
 *   });
 *   const { text } = await generateText({ model, prompt: 'Hello', maxRetries: 0 });
 */
export function keelMiddleware(options: KeelMiddlewareOptions = {}): LanguageModelV3Middleware {
  const fail = (message: string): never => {
    throw new KeelError('config.invalid', `keelMiddleware(): ${message}`);
  };
  requireOptionsObject(options, {
    where: 'keelMiddleware()',
    example: '{ fallbacks: [model], timeoutMs: 60_000 }',
  });
  rejectUnknownOptions(options, KNOWN_OPTIONS, { where: 'keelMiddleware()' });
  const clock = options.clock ?? systemClock;
  const retryOptions = options.retry ?? {};
  requireOptionsObject(retryOptions, { where: 'keelMiddleware() retry', example: '{ maxAttempts: 3 }' });
  rejectUnknownOptions(retryOptions, RETRY_OPTIONS, { where: 'keelMiddleware() retry' });
  const fallbacks = options.fallbacks ?? [];
  if (!Array.isArray(fallbacks)) fail('fallbacks must be an array of AI SDK language models');
  fallbacks.forEach((model, index) => {
    checkLanguageModel(model, `keelMiddleware(): fallbacks[${index}]`);
  });
  if (options.breaker !== undefined && options.breaker !== false) {
    if (typeof options.breaker !== 'object' || options.breaker === null)
      fail('breaker must be breaker options or false');
    // Made once here, so that a bad breaker option fails when the middleware is made, not at its first call.
    circuitBreaker({ ...options.breaker, name: 'keelMiddleware', clock });
  }
  if (options.onEvent !== undefined && typeof options.onEvent !== 'function')
    fail('onEvent must be a function (event) => void');
  const budget = options.budget ?? retryBudget({ clock });
  if (typeof budget?.tryAcquireRetry !== 'function' || typeof budget.recordRequest !== 'function')
    fail('budget must be a RetryBudget, such as retryBudget()');
  const timeoutMs = options.timeoutMs ?? 120_000;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
    fail(`timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}`);
  const requestTimeout = timeout(timeoutMs, { code: 'network.timeout', strategy: 'forced', clock });
  const makeRetry = (call: CallState) =>
    retry({
      maxAttempts: retryOptions.maxAttempts ?? 3,
      delay: retryOptions.delay,
      random: retryOptions.random,
      maxRetryAfterMs: retryOptions.maxRetryAfterMs ?? 60_000,
      maxElapsedMs: retryOptions.maxElapsedMs,
      budget,
      clock,
      // Replaying a stream whose output the caller already has would show it twice.
      retryIf: (error) => error.retryable && !call.delivered,
    });
  // Checked once here, so that a bad retry option fails when the middleware is made.
  makeRetry({ signal: undefined, delivered: false });

  const emit = (event: KeelMiddlewareEvent): void => {
    if (options.onEvent === undefined) return;
    try {
      options.onEvent(event);
    } catch (error) {
      process.emitWarning(`keel: a keelMiddleware onEvent listener threw: ${String(error)}`);
    }
  };
  const breakers = new Map<string, CircuitBreaker | undefined>();
  const breakerOf = (key: string): CircuitBreaker | undefined => {
    if (breakers.has(key)) return breakers.get(key);
    const breaker =
      options.breaker === false
        ? undefined
        : circuitBreaker({ isFailure: countsAgainstModel, ...options.breaker, name: key, clock });
    breaker?.onStateChange((transition) => {
      const to = transition.to === 'isolated' ? 'open' : transition.to;
      const type =
        to === 'open' ? 'breaker-opened' : to === 'closed' ? 'breaker-closed' : 'breaker-half-opened';
      emit({ type, atMs: transition.atMs, model: key });
    });
    breakers.set(key, breaker);
    return breaker;
  };

  const runUnderPolicies: RunUnderPolicies = async (primary, call, attempt, params) => {
    budget.recordRequest();
    const models = [primary, ...fallbacks];
    for (let index = 0; ; index++) {
      const model = models[index]!;
      const key = keyOf(model);
      const breaker = breakerOf(key);
      const policy = makeRetry(call);
      policy.onRetry((event) => {
        emit({
          type: 'retry-scheduled',
          atMs: clock.now(),
          model: key,
          attempt: event.attempt,
          delayMs: event.delayMs,
          errorCode: event.error.code,
        });
      });
      const once = (context: PolicyContext) =>
        request(requestTimeout, model, params, attempt, context, clock);
      try {
        return await policy.execute(
          (context) =>
            breaker === undefined ? once(context) : breaker.execute((admitted) => once(admitted), context),
          call.signal,
        );
      } catch (thrown) {
        if (call.signal?.aborted === true) throw call.signal.reason;
        if (isControlSignal(thrown)) throw thrown;
        const error = presentableError(
          KeelError.isInstance(thrown) ? thrown : classifyAiSdkError(thrown, { provider: model.provider }),
        );
        const code = underlyingError(error).code;
        if (call.delivered || !FALLBACK_CODES.has(code) || index + 1 >= models.length) throw error;
        emit({
          type: 'fallback',
          atMs: clock.now(),
          from: key,
          to: keyOf(models[index + 1]!),
          errorCode: code,
        });
      }
    }
  };

  return {
    specificationVersion: 'v3',
    wrapGenerate: ({ params, model }) =>
      runUnderPolicies(
        model,
        { signal: params.abortSignal, delivered: false },
        async (target, attemptParams) => target.doGenerate(attemptParams),
        params,
      ),
    wrapStream: ({ params, model }) => streamUnderPolicies(runUnderPolicies, model, params),
  };
}

/** One request: timed out, its signal in place of the caller's, its failure classified from the AI SDK's types. */
async function request<T>(
  requestTimeout: TimeoutPolicy,
  model: LanguageModelV3,
  params: LanguageModelV3CallOptions,
  attempt: (model: LanguageModelV3, params: LanguageModelV3CallOptions) => Promise<T>,
  context: PolicyContext,
  clock: Clock,
): Promise<T> {
  return requestTimeout.execute(async (timed) => {
    const signal = timed.signal;
    try {
      return await attempt(model, { ...params, abortSignal: signal });
    } catch (error) {
      // A timeout or the caller's cancellation: the policies around say which.
      if (signal.aborted || isControlSignal(error)) throw error;
      throw classifyAiSdkError(error, { provider: model.provider, nowMs: clock.now() });
    }
  }, context);
}

function keyOf(model: LanguageModelV3): string {
  return `${model.provider}/${model.modelId}`;
}
