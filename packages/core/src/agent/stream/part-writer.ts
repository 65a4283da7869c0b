import type { ModelStreamPart } from '../../spec/model.js';
import type { RunEvent } from '../../spec/run-events.js';
import type { RunResult } from '../loop/run.js';
import type { PartQueue } from './part-queue.js';

/**
 * Turns what a run reports (its text deltas, the model's other streamed parts, its events) into stream parts, in
 * the order they happened. It also fills in what a provider that does not stream left out: an answer's text and
 * tool calls are given whole when the model call ends, if none of it was streamed.
 */
export class PartWriter<Output> {
  private step = -1;
  /** Whether text of the current step reached the queue (or a recovery took its place). */
  private stepText = false;
  /** The current attempt's tool calls by index: whether each has ended. */
  private calls = new Map<number, boolean>();

  constructor(private readonly queue: PartQueue<Output>) {}

  readonly text = (delta: string): void => {
    if (delta === '') return;
    this.stepText = true;
    this.queue.push({ type: 'text-delta', step: this.step, delta });
  };

  readonly model = (part: ModelStreamPart): void => {
    const step = this.step;
    switch (part.type) {
      case 'reasoning-delta':
        if (part.delta !== '') this.queue.push({ type: 'reasoning-delta', step, delta: part.delta });
        return;
      case 'tool-call-start':
        this.calls.set(part.index, false);
        this.queue.push({ ...part, step });
        return;
      case 'tool-call-delta':
        if (part.delta !== '') this.queue.push({ ...part, step });
        return;
      case 'tool-call-end':
        this.calls.set(part.index, true);
        this.queue.push({ ...part, step });
        return;
    }
  };

  readonly event = (event: RunEvent): void => {
    const queue = this.queue;
    switch (event.type) {
      case 'model-call-start':
        this.calls = new Map();
        if (event.step !== this.step) {
          this.step = event.step;
          this.stepText = false;
          queue.push({ type: 'step-start', step: event.step, model: event.model });
        }
        return;
      case 'model-call-end':
        if (event.outcome === 'success') this.completeAnswer(event);
        return;
      case 'tool-call-end':
        queue.push({
          type: 'tool-result',
          step: event.step,
          index: event.callIndex,
          toolCallId: event.toolCallId,
          toolName: event.toolName,
          result: event.result,
        });
        return;
      case 'step-end':
        queue.push({ type: 'step-end', step: event.step, toolCalls: event.toolCalls });
        return;
      case 'retry-scheduled':
        queue.push({
          type: 'retry',
          step: event.step,
          target: event.target,
          name: event.name,
          attempt: event.attempt,
          delayMs: event.delayMs,
          errorCode: event.errorCode,
        });
        return;
      case 'fallback-used':
        queue.push({
          type: 'fallback',
          step: event.step,
          from: event.from,
          to: event.to,
          errorCode: event.errorCode,
        });
        return;
      case 'stream-recovered':
        this.stepText = true;
        queue.push({
          type: 'recovery',
          step: event.step,
          errorCode: event.errorCode,
          mode: event.mode,
          keptCharacters: event.keptCharacters,
          model: event.model,
        });
        return;
    }
  };

  /** The run's last parts: what it waits for, its failure, and its result. */
  finish(result: RunResult<Output>): void {
    const waiting = result.pending !== undefined && result.pending.length > 0;
    if (waiting) this.queue.push({ type: 'approval-required', pending: result.pending! });
    else if (result.error !== undefined) this.queue.push({ type: 'error', error: result.error });
    this.queue.push({ type: 'finish', result });
    this.queue.close();
  }

  /** What a provider that does not stream left out of the parts: the text and the tool calls of the answer. */
  private completeAnswer(event: Extract<RunEvent, { type: 'model-call-end' }>): void {
    const step = this.step;
    if (!this.stepText && event.content !== undefined && event.content !== '') this.text(event.content);
    const toolCalls = event.toolCalls ?? [];
    toolCalls.forEach((call, index) => {
      const ended = this.calls.get(index);
      if (ended === true) return;
      const { id: toolCallId, name: toolName } = call;
      if (ended === undefined) {
        this.queue.push({ type: 'tool-call-start', step, index, toolCallId, toolName });
        this.queue.push({ type: 'tool-call-delta', step, index, toolCallId, delta: call.arguments });
      }
      this.queue.push({
        type: 'tool-call-end',
        step,
        index,
        toolCallId,
        toolName,
        arguments: call.arguments,
      });
    });
    this.calls = new Map();
  }
}
