import { optionError } from '../../options/option-error.js';
import type { RunOptions, RunResult } from '../loop/run.js';
import { linkStream } from '../run/stream-parts.js';
import { DEFAULT_HIGH_WATER_MARK, PartQueue } from './part-queue.js';
import { PartWriter } from './part-writer.js';
import type { StreamPart } from './stream-part.js';

/** Options of `agent.stream()`: those of `run()`, and how many parts the stream holds for a slow reader. */
export interface StreamOptions extends RunOptions {
  /**
   * The back-pressure bound: how many parts the stream holds for a reader that falls behind. From this many on, each
   * text, reasoning or tool-argument delta is appended to the newest queued delta of its kind instead of being queued
   * on its own (the model's answer is read on at full speed: a provider's stream is never held open), and the run
   * waits before its next step (model call or tool calls) until the reader has read down to half of it. So a reader
   * that never reads costs at most this many parts, plus the parts of one step (a few per tool call), plus the text
   * of that step, which the run holds anyway; a run whose reader stopped reading waits between steps until its
   * deadline (`limits.timeoutMs`) or its cancellation. 1 to 1_000_000. Defaults to 1_000.
   */
  highWaterMark?: number;
}

/**
 * A run in progress, read as a stream of typed parts ({@link StreamPart}). Iterate it (`for await`), or read only its
 * text (`textStream`), or hand it on as a web `ReadableStream` (`toReadableStream()`): one reader, once. Leaving the
 * loop early (`break`, `return`, a throw) or cancelling the readable stream cancels the run; `result` then settles as
 * `cancelled`. `result` settles whether or not the parts are read.
 */
export interface AgentStream<Output = string> extends AsyncIterable<StreamPart<Output>> {
  /** The run's id (the one given, or a fresh UUID). */
  readonly runId: string;
  /**
   * The run's result, as `run()` resolves it (always a terminal state). Rejects only as `run()` does, for invalid
   * arguments (`config.invalid`), before anything ran.
   */
  readonly result: Promise<RunResult<Output>>;
  /** The answer's text deltas alone. A `restarted` recovery cannot be told apart here: read the parts to see one. */
  readonly textStream: AsyncIterable<string>;
  /** The parts as a web `ReadableStream`; cancelling it cancels the run. */
  toReadableStream(): ReadableStream<StreamPart<Output>>;
}

/**
 * Starts a run through `run` (the agent's own, with sessions, durability and approvals as it has them) and returns
 * its stream at once.
 */
export function createAgentStream<Output>(
  run: (options: RunOptions) => Promise<RunResult<Output>>,
  options: StreamOptions = {},
  makeRunId: () => string,
): AgentStream<Output> {
  const { highWaterMark = DEFAULT_HIGH_WATER_MARK, ...runOptions } =
    typeof options === 'object' && options !== null ? options : ({} as StreamOptions);
  const queue = new PartQueue<Output>(checkHighWaterMark(highWaterMark) ? highWaterMark : 1);
  const writer = new PartWriter<Output>(queue);
  const reader = new AbortController();
  const runId = runOptions.runId ?? makeRunId();
  const userText = runOptions.onTextDelta;
  const userEvent = runOptions.onEvent;
  const onTextDelta =
    typeof userText === 'function'
      ? (delta: string) => {
          writer.text(delta);
          userText(delta);
        }
      : writer.text;
  linkStream(onTextDelta, { onStreamPart: writer.model, beforeStep: () => queue.belowMark() });
  let result: Promise<RunResult<Output>>;
  if (typeof options !== 'object' || options === null) {
    // Not options at all: run() refuses them as it would its own.
    result = run(options as RunOptions);
  } else if (!checkHighWaterMark(highWaterMark)) {
    result = Promise.reject(
      optionError({
        where: 'stream',
        option: 'highWaterMark',
        message: `highWaterMark must be an integer from 1 to 1000000 (got ${String(highWaterMark)})`,
      }),
    );
  } else {
    const signal = runOptions.signal;
    result = run({
      ...runOptions,
      runId,
      // A signal that is not one is passed on for run() to refuse.
      signal:
        signal === undefined
          ? reader.signal
          : signal instanceof AbortSignal
            ? AbortSignal.any([signal, reader.signal])
            : signal,
      onTextDelta,
      onEvent:
        typeof userEvent === 'function'
          ? (event) => {
              writer.event(event);
              userEvent(event);
            }
          : writer.event,
    });
  }
  result.then(
    (settled) => writer.finish(settled),
    (error: unknown) => queue.close({ error }),
  );
  let settled = false;
  result.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  let taken = false;
  const take = (): void => {
    if (taken) {
      throw optionError({
        where: 'stream',
        option: 'stream',
        message:
          'the parts of a stream can be read once only (by iterating, textStream or toReadableStream())',
      });
    }
    taken = true;
  };
  const leave = (): void => {
    queue.discard();
    if (!settled) reader.abort('the stream was left before the run ended');
  };
  const iterator = (): AsyncIterator<StreamPart<Output>> => {
    take();
    return {
      next: () => queue.next(),
      return: () => {
        leave();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  };
  return {
    runId,
    result,
    [Symbol.asyncIterator]: iterator,
    get textStream(): AsyncIterable<string> {
      return { [Symbol.asyncIterator]: () => textIterator(iterator()) };
    },
    toReadableStream(): ReadableStream<StreamPart<Output>> {
      const parts = iterator();
      return new ReadableStream<StreamPart<Output>>(
        {
          async pull(controller) {
            const next = await parts.next();
            if (next.done === true) controller.close();
            else controller.enqueue(next.value);
          },
          cancel: () => {
            leave();
          },
        },
        { highWaterMark: 0 },
      );
    },
  };
}

function checkHighWaterMark(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 1_000_000;
}

/** The text deltas of `parts`; leaving early leaves `parts` (and so cancels the run). */
function textIterator<Output>(parts: AsyncIterator<StreamPart<Output>>): AsyncIterator<string> {
  return {
    async next(): Promise<IteratorResult<string>> {
      for (;;) {
        const next = await parts.next();
        if (next.done === true) return { value: undefined, done: true };
        if (next.value.type === 'text-delta') return { value: next.value.delta, done: false };
      }
    },
    return: async () => {
      await parts.return?.();
      return { value: undefined, done: true };
    },
  };
}
