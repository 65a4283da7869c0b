import { KeelError } from '@keel/core';
import type { Answer } from './response.js';

// `stop_reason: pause_turn`: the API paused a long turn (a server tool's loop, such as web search) and expects the
// turn back as it came, to go on with it. keel continues it, a bounded number of times, inside one `generate`.

/**
 * The body that continues a paused turn: the same request, with the turn so far (every block as the API sent it)
 * as the conversation's last assistant turn.
 */
export function continuedBody(
  body: Record<string, unknown>,
  pausedContent: unknown[],
): Record<string, unknown> {
  const messages = [...(body.messages as { role: string; content: unknown }[])];
  const last = messages[messages.length - 1];
  if (last?.role === 'assistant') {
    const before = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : last.content;
    messages[messages.length - 1] = {
      role: 'assistant',
      content: [...(before as unknown[]), ...pausedContent],
    };
  } else {
    messages.push({ role: 'assistant', content: pausedContent });
  }
  return { ...body, messages };
}

/** A paused answer and its continuation as one answer; each request's tokens count (each re-reads the prompt). */
export function joinAnswers(paused: Answer, next: Answer): Answer {
  return {
    blocks: [...paused.blocks, ...next.blocks],
    content: [...paused.content, ...next.content],
    stopReason: next.stopReason,
    usage: {
      inputTokens: paused.usage.inputTokens + next.usage.inputTokens,
      outputTokens: paused.usage.outputTokens + next.usage.outputTokens,
    },
    model: next.model,
  };
}

/**
 * The turn was still paused after `continuations` continuations: an answer cut at a limit, like one cut at the token
 * limit (`provider.max_tokens`, not retried), its text so far in `data.partialOutput`.
 */
export function pausedTooOften(answer: Answer, continuations: number, provider: string): KeelError {
  const partialOutput = answer.blocks.map((block) => (block.type === 'text' ? block.text : '')).join('');
  return new KeelError(
    'provider.max_tokens',
    `${provider}: ${answer.model} paused its turn again (stop_reason pause_turn) after ${continuations} continuation${continuations === 1 ? '' : 's'}`,
    {
      provider,
      data: { stopReason: 'pause_turn', continuations, partialOutput },
      guidance:
        'The turn is long (a server tool kept working): raise maxPauseContinuations, or ask for less in one turn.',
    },
  );
}
