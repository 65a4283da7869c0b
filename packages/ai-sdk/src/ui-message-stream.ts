import type { AgentStream, KeelError, PendingDecision, StreamPart } from '@keel/core';

/**
 * A chunk of the AI SDK's UI message stream (`ai` v6's `UIMessageChunk`), as far as keel writes them: the same
 * shapes, declared here so that `@keel/ai-sdk` does not need `ai` installed. Read by `useChat` and
 * `readUIMessageStream`.
 */
export type UIMessageStreamChunk =
  | { type: 'start'; messageId?: string; messageMetadata?: KeelMessageMetadata }
  | { type: 'start-step' }
  | { type: 'finish-step' }
  | { type: 'text-start' | 'text-end' | 'reasoning-start' | 'reasoning-end'; id: string }
  | { type: 'text-delta' | 'reasoning-delta'; id: string; delta: string }
  | { type: 'tool-input-start'; toolCallId: string; toolName: string }
  | { type: 'tool-input-delta'; toolCallId: string; inputTextDelta: string }
  | { type: 'tool-input-available'; toolCallId: string; toolName: string; input: unknown }
  | { type: 'tool-output-available'; toolCallId: string; output: unknown }
  | { type: 'tool-output-error'; toolCallId: string; errorText: string }
  | { type: 'tool-approval-request'; approvalId: string; toolCallId: string }
  | { type: `data-keel-${string}`; data: unknown; transient?: boolean }
  | { type: 'error'; errorText: string }
  | { type: 'abort'; reason?: string }
  | { type: 'finish'; finishReason?: 'stop' | 'error' | 'other'; messageMetadata?: KeelMessageMetadata };

/** What keel puts in the message's metadata: the run's id at `start`, and at `finish` how the run ended. */
export interface KeelMessageMetadata {
  runId: string;
  status?: string;
  stopReason?: string;
}

/** Options of {@link toUIMessageStream} and {@link toUIMessageStreamResponse}. */
export interface UIMessageStreamOptions {
  /** The assistant message's id sent at `start`. Defaults to the run's id. */
  messageId?: string;
  /**
   * The text the client is shown for a run that failed. Defaults to the error's code and message (keel's messages
   * carry no credentials: they are redacted where errors enter keel); return something plainer to show less.
   */
  errorText?: (error: KeelError) => string;
}

/**
 * The parts of a keel agent's stream (`agent.stream()`) as an AI SDK UI message stream, for `useChat` front ends and
 * `readUIMessageStream`:
 * - steps are `start-step` / `finish-step`; text and reasoning are `text-*` / `reasoning-*` blocks (one per step,
 *   closed before a tool call);
 * - tool calls are `tool-input-start`, `tool-input-delta`, `tool-input-available`, then `tool-output-available` or
 *   `tool-output-error` when the tool ran;
 * - a call waiting for approval is a `tool-approval-request` whose `approvalId` is the call's idempotency key: answer
 *   on the server with `agent.resume(runId, { approvals: { [approvalId]: { approved } } })`;
 * - retries, fallbacks and recoveries are transient data chunks (`data-keel-retry`, `data-keel-fallback`,
 *   `data-keel-recovery`), given to `useChat`'s `onData` and not kept in the message. A `restarted` recovery also
 *   ends the step's text block and starts a new one: `data-keel-recovery` names the voided block (`voidedTextId`),
 *   which a front end drops;
 * - a failed run is an `error` chunk (see `errorText`), a cancelled one `abort`; `finish` carries the run's id, status
 *   and stop reason as message metadata.
 * Cancelling the returned stream (the client went away) cancels the run.
 */
export function toUIMessageStream(
  stream: AgentStream<unknown>,
  options: UIMessageStreamOptions = {},
): ReadableStream<UIMessageStreamChunk> {
  const parts = stream[Symbol.asyncIterator]();
  const writer = new ChunkWriter(stream.runId, options);
  return new ReadableStream<UIMessageStreamChunk>(
    {
      start(controller) {
        controller.enqueue({
          type: 'start',
          messageId: options.messageId ?? stream.runId,
          messageMetadata: { runId: stream.runId },
        });
      },
      async pull(controller) {
        // One keel part may be no chunk at all (a step-end already closed): read on until something is written.
        for (;;) {
          const next = await parts.next();
          if (next.done === true) {
            controller.close();
            return;
          }
          const chunks = writer.write(next.value);
          for (const chunk of chunks) controller.enqueue(chunk);
          if (chunks.length > 0) return;
        }
      },
      async cancel() {
        await parts.return?.();
      },
    },
    { highWaterMark: 0 },
  );
}

/** The headers of a UI message stream response, as the AI SDK sends them (`UI_MESSAGE_STREAM_HEADERS`). */
const UI_MESSAGE_STREAM_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
};

/**
 * A web `Response` streaming the agent's run as an AI SDK UI message stream (server-sent events, `data: [DONE]`
 * last), with the AI SDK's headers; `init` adds status and headers. Return it from a route handler that `useChat`
 * posts to. The client going away cancels the run.
 *
 * @example
 *   export async function POST(request: Request) {
 *     const { messages } = await request.json();
 *     return toUIMessageStreamResponse(assistant.stream(lastUserText(messages)));
 *   }
 */
export function toUIMessageStreamResponse(
  stream: AgentStream<unknown>,
  init: ResponseInit & UIMessageStreamOptions = {},
): Response {
  const { messageId, errorText, headers, ...responseInit } = init;
  const chunks = toUIMessageStream(stream, {
    ...(messageId === undefined ? {} : { messageId }),
    ...(errorText === undefined ? {} : { errorText }),
  });
  const encoder = new TextEncoder();
  const body = chunks.pipeThrough(
    new TransformStream<UIMessageStreamChunk, Uint8Array>({
      transform(chunk, controller) {
        controller.enqueue(encoder.encode(`data: ${JSON.stringify(chunk)}\n\n`));
      },
      flush(controller) {
        controller.enqueue(encoder.encode('data: [DONE]\n\n'));
      },
    }),
  );
  const merged = new Headers(headers);
  for (const [name, value] of Object.entries(UI_MESSAGE_STREAM_HEADERS))
    if (!merged.has(name)) merged.set(name, value);
  return new Response(body, { status: 200, ...responseInit, headers: merged });
}

/** Keeps what is open (a step, a text or reasoning block) and turns each keel part into chunks. */
class ChunkWriter {
  private stepOpen = false;
  private text: string | undefined;
  private reasoning: string | undefined;
  private blocks = 0;
  /** Tool call ids by `step:index`, for approvals. */
  private readonly callIds = new Map<string, string>();
  /** Calls of the step whose input went out and whose output has not. */
  private readonly open = new Set<string>();

  constructor(
    private readonly runId: string,
    private readonly options: UIMessageStreamOptions,
  ) {}

  write(part: StreamPart<unknown>): UIMessageStreamChunk[] {
    const chunks: UIMessageStreamChunk[] = [];
    switch (part.type) {
      case 'step-start':
        this.closeStep(chunks);
        this.stepOpen = true;
        chunks.push({ type: 'start-step' });
        break;
      case 'text-delta':
        this.closeReasoning(chunks);
        if (this.text === undefined) {
          this.text = `text-${++this.blocks}`;
          chunks.push({ type: 'text-start', id: this.text });
        }
        chunks.push({ type: 'text-delta', id: this.text, delta: part.delta });
        break;
      case 'reasoning-delta':
        this.closeText(chunks);
        if (this.reasoning === undefined) {
          this.reasoning = `reasoning-${++this.blocks}`;
          chunks.push({ type: 'reasoning-start', id: this.reasoning });
        }
        chunks.push({ type: 'reasoning-delta', id: this.reasoning, delta: part.delta });
        break;
      case 'tool-call-start':
        this.closeBlocks(chunks);
        this.callIds.set(`${part.step}:${part.index}`, part.toolCallId);
        chunks.push({ type: 'tool-input-start', toolCallId: part.toolCallId, toolName: part.toolName });
        break;
      case 'tool-call-delta':
        chunks.push({ type: 'tool-input-delta', toolCallId: part.toolCallId, inputTextDelta: part.delta });
        break;
      case 'tool-call-end':
        this.open.add(part.toolCallId);
        chunks.push({
          type: 'tool-input-available',
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          input: parseArguments(part.arguments),
        });
        break;
      case 'tool-result':
        this.open.delete(part.toolCallId);
        chunks.push(
          part.result.status === 'success'
            ? { type: 'tool-output-available', toolCallId: part.toolCallId, output: part.result.content }
            : {
                type: 'tool-output-error',
                toolCallId: part.toolCallId,
                errorText: part.result.error.message,
              },
        );
        break;
      case 'step-end':
        // A call the step ended without running (its arguments were invalid, its tool unknown): the model was told
        // and corrects it in the next step; the client sees the call end in error rather than wait on it.
        for (const toolCallId of this.open)
          chunks.push({ type: 'tool-output-error', toolCallId, errorText: NOT_RUN });
        this.open.clear();
        this.closeStep(chunks);
        break;
      case 'retry':
      case 'fallback': {
        const { type, ...data } = part;
        chunks.push({ type: `data-keel-${type}`, data, transient: true });
        break;
      }
      case 'recovery': {
        const { type, ...data } = part;
        const voidedTextId = part.mode === 'restarted' ? this.text : undefined;
        if (voidedTextId !== undefined) this.closeText(chunks);
        chunks.push({
          type: 'data-keel-recovery',
          data: voidedTextId === undefined ? data : { ...data, voidedTextId },
          transient: true,
        });
        break;
      }
      case 'approval-required':
        this.closeStep(chunks);
        for (const pending of part.pending) chunks.push(this.approvalChunk(pending));
        break;
      case 'error':
        this.closeStep(chunks);
        if (part.error.code === 'run.cancelled') chunks.push({ type: 'abort', reason: part.error.message });
        else chunks.push({ type: 'error', errorText: this.errorText(part.error) });
        break;
      case 'finish': {
        this.closeStep(chunks);
        const { status, stopReason } = part.result;
        if (status === 'cancelled') break;
        chunks.push({
          type: 'finish',
          finishReason: status === 'completed' ? 'stop' : status === 'failed' ? 'error' : 'other',
          messageMetadata: { runId: this.runId, status, stopReason },
        });
        break;
      }
    }
    return chunks;
  }

  private approvalChunk(pending: PendingDecision): UIMessageStreamChunk {
    const toolCallId = this.callIds.get(`${pending.step}:${pending.callIndex}`);
    if (pending.kind === 'approval' && toolCallId !== undefined)
      return { type: 'tool-approval-request', approvalId: pending.idempotencyKey, toolCallId };
    return { type: 'data-keel-decision', data: pending };
  }

  private errorText(error: KeelError): string {
    const custom = this.options.errorText;
    return custom === undefined ? `${error.code}: ${error.message}` : custom(error);
  }

  private closeText(chunks: UIMessageStreamChunk[]): void {
    if (this.text === undefined) return;
    chunks.push({ type: 'text-end', id: this.text });
    this.text = undefined;
  }

  private closeReasoning(chunks: UIMessageStreamChunk[]): void {
    if (this.reasoning === undefined) return;
    chunks.push({ type: 'reasoning-end', id: this.reasoning });
    this.reasoning = undefined;
  }

  private closeBlocks(chunks: UIMessageStreamChunk[]): void {
    this.closeText(chunks);
    this.closeReasoning(chunks);
  }

  private closeStep(chunks: UIMessageStreamChunk[]): void {
    this.closeBlocks(chunks);
    if (!this.stepOpen) return;
    chunks.push({ type: 'finish-step' });
    this.stepOpen = false;
  }
}

const NOT_RUN =
  'keel did not run this call (invalid arguments or an unknown tool): the model was asked to correct it';

/** The arguments as JSON, or as their text when they are not JSON (the model gets a correction then). */
function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
