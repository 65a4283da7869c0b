/** The most `cache_control` breakpoints one Messages API request may carry. */
export const MAX_CACHE_BREAKPOINTS = 4;

const EPHEMERAL = { type: 'ephemeral' } as const;

type Block = Record<string, unknown>;

/**
 * Marks the stable prefix of a Messages API request body for Anthropic's prompt cache, in place, with at most
 * {@link MAX_CACHE_BREAKPOINTS} `cache_control: { type: 'ephemeral' }` breakpoints, in the API's prefix order:
 *
 * 1. the last tool definition (caches every tool);
 * 2. the last system block (`system` becomes a list of one text block);
 * 3. the last block of the user turn before the last one: the previous request's breakpoint, so that a request
 *    still reads the cache when more than 20 blocks (the API's look-back) came after it;
 * 4. the last block of the last user turn: the whole conversation, read by the next request.
 *
 * Blocks that cannot carry a breakpoint (thinking) and empty text are skipped. A prompt shorter than the model's
 * minimum cacheable length (1,024 tokens for most models) is simply not cached: the API neither fails nor charges
 * more. Nothing else in the body changes, so the bytes of the prefix stay those of the request without breakpoints.
 */
export function placeCacheBreakpoints(body: Record<string, unknown>): void {
  let left = MAX_CACHE_BREAKPOINTS;
  const tools = body.tools;
  if (Array.isArray(tools) && tools.length > 0) {
    (tools[tools.length - 1] as Block).cache_control = EPHEMERAL;
    left--;
  }
  if (typeof body.system === 'string' && body.system !== '') {
    body.system = [{ type: 'text', text: body.system, cache_control: EPHEMERAL }];
    left--;
  }
  const messages = Array.isArray(body.messages) ? (body.messages as Block[]) : [];
  const userTurns = messages.flatMap((message, index) => (message.role === 'user' ? [index] : []));
  if (left <= 0) return;
  for (const index of userTurns.slice(-Math.min(2, left)).reverse()) {
    if (markLastBlock(messages[index]!)) left--;
  }
}

/** Puts a breakpoint on the last block of a turn that can carry one; false when none can. */
function markLastBlock(message: Block): boolean {
  if (typeof message.content === 'string') {
    if (message.content === '') return false;
    message.content = [{ type: 'text', text: message.content, cache_control: EPHEMERAL }];
    return true;
  }
  if (!Array.isArray(message.content)) return false;
  for (let index = message.content.length - 1; index >= 0; index--) {
    const block = message.content[index] as Block;
    if (block.type === 'thinking' || block.type === 'redacted_thinking') continue;
    if (block.type === 'text' && block.text === '') continue;
    // A copy: the same block object may be shared with the conversation's other requests.
    message.content[index] = { ...block, cache_control: EPHEMERAL };
    return true;
  }
  return false;
}
