import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
} from '@ai-sdk/provider';

/** One call through the middleware: its caller's signal, and whether output reached the caller (streams). */
export interface CallState {
  readonly signal: AbortSignal | undefined;
  delivered: boolean;
}

/** Runs one model request under the middleware's policies; resolves with what `attempt` resolves with. */
export type RunUnderPolicies = <T>(
  primary: LanguageModelV3,
  call: CallState,
  attempt: (model: LanguageModelV3, params: LanguageModelV3CallOptions) => Promise<T>,
  params: LanguageModelV3CallOptions,
) => Promise<T>;

// Parts that carry no output: held back until the first one that does, so that a stream failing before it can still
// be retried, or fall back, without the caller seeing two starts.
const PREAMBLE = new Set<LanguageModelV3StreamPart['type']>([
  'stream-start',
  'response-metadata',
  'raw',
  'text-start',
  'reasoning-start',
]);

/** A thrown `error` part: what the model reported, to be classified as any failure. */
class ErrorPart {
  constructor(readonly error: unknown) {}
}

/**
 * Streams under the middleware's policies. Each attempt calls `doStream` and reads its stream through to the end
 * inside the policies, so that the timeout covers the whole stream and a failure anywhere counts against the
 * model's breaker. Until the first part with output, a failure (an HTTP error, a reset, an `error` part) is retried
 * or falls back, unseen by the caller; the returned promise settles then, with the stream, or rejects with the
 * final error. After it, the failure is the stream's last part (`{ type: 'error', error }`, a KeelError), and
 * nothing is replayed.
 */
export async function streamUnderPolicies(
  runUnderPolicies: RunUnderPolicies,
  primary: LanguageModelV3,
  params: LanguageModelV3CallOptions,
): Promise<LanguageModelV3StreamResult> {
  // The caller may stop reading: the request in flight is then aborted like a cancelled one.
  const stopped = new AbortController();
  const signal =
    params.abortSignal === undefined ? stopped.signal : AbortSignal.any([params.abortSignal, stopped.signal]);
  const call: CallState = { signal, delivered: false };
  let output!: ReadableStreamDefaultController<LanguageModelV3StreamPart>;
  const stream = new ReadableStream<LanguageModelV3StreamPart>({
    start: (controller) => {
      output = controller;
    },
    cancel: (reason) => stopped.abort(reason),
  });
  let settle!: { resolve: (result: LanguageModelV3StreamResult) => void; reject: (error: unknown) => void };
  const started = new Promise<LanguageModelV3StreamResult>((resolve, reject) => {
    settle = { resolve, reject };
  });
  // The caller may have cancelled the stream: then there is nobody to give parts to.
  const enqueue = (part: LanguageModelV3StreamPart) => {
    if (!stopped.signal.aborted) output.enqueue(part);
  };
  const deliver = (result: LanguageModelV3StreamResult, held: LanguageModelV3StreamPart[]) => {
    call.delivered = true;
    for (const part of held) enqueue(part);
    settle.resolve({ ...result, stream });
  };

  const attempt = async (model: LanguageModelV3, attemptParams: LanguageModelV3CallOptions) => {
    const result = await model.doStream(attemptParams);
    const reader = result.stream.getReader();
    const held: LanguageModelV3StreamPart[] = [];
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (value.type === 'error') throw new ErrorPart(value.error);
        if (call.delivered) enqueue(value);
        else if (PREAMBLE.has(value.type)) held.push(value);
        else deliver(result, [...held, value]);
      }
    } catch (error) {
      await reader.cancel().catch(() => undefined);
      throw error instanceof ErrorPart ? error.error : error;
    } finally {
      reader.releaseLock();
    }
    if (!call.delivered) deliver(result, held);
  };

  const close = () => {
    if (!stopped.signal.aborted) output.close();
  };
  runUnderPolicies(primary, call, attempt, { ...params, abortSignal: signal }).then(
    close,
    (error: unknown) => {
      if (!call.delivered) {
        settle.reject(error);
        return;
      }
      enqueue({ type: 'error', error });
      close();
    },
  );
  return started;
}
