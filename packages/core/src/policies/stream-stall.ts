import { KeelError } from '../errors/keel-error.js';

/** The longest wait for the first byte of a streamed answer, from the request being sent, in milliseconds. */
export const DEFAULT_STREAM_FIRST_BYTE_TIMEOUT_MS = 30_000;

/** The longest silence between two pieces of a streamed answer, in milliseconds. */
export const DEFAULT_STREAM_IDLE_TIMEOUT_MS = 15_000;

/** Options of {@link watchStreamStall}. */
export interface StreamStallOptions {
  /** The caller's signal: its abort aborts {@link StreamStallWatch.signal} with the same reason. */
  signal: AbortSignal;
  /** Named in the error. */
  provider: string;
  /**
   * Longest wait from {@link watchStreamStall} (call it just before sending) to the first piece received, in
   * milliseconds. Defaults to {@link DEFAULT_STREAM_FIRST_BYTE_TIMEOUT_MS} (30_000).
   */
  firstByteTimeoutMs?: number;
  /** Longest silence between two pieces, in milliseconds. Defaults to {@link DEFAULT_STREAM_IDLE_TIMEOUT_MS} (15_000). */
  idleTimeoutMs?: number;
  /** What {@link StreamStallWatch.received} counts, named in the error: `bytes` (HTTP bodies) or `parts`. Defaults to `bytes`. */
  unit?: 'bytes' | 'parts';
}

/** Watches one streamed call for stalls; see {@link watchStreamStall}. */
export interface StreamStallWatch {
  /** Pass this, not the caller's, to the request and the body reader: aborted on the caller's abort or on a stall. */
  readonly signal: AbortSignal;
  /** Records `amount` more received (bytes or parts): the first piece ends the first-byte wait, each one the silence. */
  received(amount: number): void;
  /** Stops watching (the stream ended or failed). Idempotent. */
  stop(): void;
}

/**
 * Watches a streamed model call for a stall: no first byte within `firstByteTimeoutMs` of the request, or no piece
 * for `idleTimeoutMs` after the last one. A stall aborts {@link StreamStallWatch.signal} with a `network.timeout`
 * KeelError (retryable) whose `data` says what stalled: `{ stalled: 'first_byte' | 'idle', timeoutMs, received, unit }`.
 * Every provider reading a stream shares it (the OpenAI and Anthropic SSE readers, the AI SDK bridge).
 *
 * One timer serves the whole call: a piece only records its time, and the timer, when it fires early, waits for the
 * rest of the silence, so the per-piece cost is a clock read.
 */
export function watchStreamStall(options: StreamStallOptions): StreamStallWatch {
  const {
    signal,
    provider,
    firstByteTimeoutMs = DEFAULT_STREAM_FIRST_BYTE_TIMEOUT_MS,
    idleTimeoutMs = DEFAULT_STREAM_IDLE_TIMEOUT_MS,
    unit = 'bytes',
  } = options;
  const controller = new AbortController();
  let received = 0;
  let lastAtMs = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const onAbort = () => {
    stop();
    controller.abort(signal.reason);
  };
  const stop = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    signal.removeEventListener('abort', onAbort);
  };
  const stall = (stalled: 'first_byte' | 'idle', timeoutMs: number) => {
    stop();
    const what =
      stalled === 'first_byte'
        ? `no first byte within ${timeoutMs} ms`
        : `no data for ${timeoutMs} ms after ${received} ${unit}`;
    controller.abort(
      new KeelError('network.timeout', `${provider}: the streamed answer stalled: ${what}`, {
        provider,
        data: { stalled, timeoutMs, received, unit },
      }),
    );
  };
  const checkIdle = () => {
    const silentMs = Date.now() - lastAtMs;
    if (silentMs >= idleTimeoutMs) stall('idle', idleTimeoutMs);
    else timer = setTimeout(checkIdle, idleTimeoutMs - silentMs);
  };
  if (signal.aborted) {
    controller.abort(signal.reason);
  } else {
    signal.addEventListener('abort', onAbort, { once: true });
    timer = setTimeout(() => stall('first_byte', firstByteTimeoutMs), firstByteTimeoutMs);
  }
  return {
    signal: controller.signal,
    received(amount) {
      if (timer === undefined) return;
      lastAtMs = Date.now();
      if (received === 0) {
        clearTimeout(timer);
        timer = setTimeout(checkIdle, idleTimeoutMs);
      }
      received += amount;
    },
    stop,
  };
}

/**
 * The stall watch of one streamed model request (a `ModelRequest`): its signal, and its `streamFirstByteTimeoutMs` and
 * `streamIdleTimeoutMs` (the defaults when unset).
 */
export function watchModelStream(
  request: { signal: AbortSignal; streamFirstByteTimeoutMs?: number; streamIdleTimeoutMs?: number },
  provider: string,
  unit: 'bytes' | 'parts' = 'bytes',
): StreamStallWatch {
  return watchStreamStall({
    signal: request.signal,
    provider,
    firstByteTimeoutMs: request.streamFirstByteTimeoutMs,
    idleTimeoutMs: request.streamIdleTimeoutMs,
    unit,
  });
}
