import type { Context, Span } from '@opentelemetry/api';

/** A tool call's span in flight. */
export interface ToolSpan {
  readonly span: Span;
  readonly toolName: string;
  /** The run's context with this span set, what the tool runs in: made when first asked for. */
  context?: Context;
}

/** One run's spans while it goes on: its `invoke_agent` span, the `chat` span of the attempt in flight, its tools'. */
export class RunTrace {
  /** The attempt in flight; model calls of one run never overlap. */
  chat: Span | undefined;
  /** `execute_tool` spans of calls in flight, by idempotency key. */
  readonly tools = new Map<string, ToolSpan>();
  /** Tokens of every successful attempt, for the run's span. */
  inputTokens = 0;
  outputTokens = 0;
  /** Whether the run's span already names the model of the first attempt. */
  modelNamed = false;

  constructor(
    readonly root: Span,
    /** The context the run was started in, with the run's span set: every child span's parent. */
    readonly context: Context,
    /** The agent whose run it is: tool names are bounded per agent. */
    readonly agentName: string,
  ) {}

  /** The one call of `toolName` in flight, when there is exactly one (tool retries name the tool, not the call). */
  onlyCallOf(toolName: string): ToolSpan | undefined {
    let found: ToolSpan | undefined;
    for (const entry of this.tools.values()) {
      if (entry.toolName !== toolName) continue;
      if (found !== undefined) return undefined;
      found = entry;
    }
    return found;
  }
}
