import type { ErrorCode } from './codes.js';
import { CONTEXT_OVERFLOW_MESSAGE, QUOTA_EXHAUSTED_MESSAGE } from './provider-bodies.js';

/**
 * The last resort: words in a message. Order matters: an overflowing context and an exhausted quota are named
 * before the rate limit and the timeout that their messages sometimes also mention.
 */
export const MESSAGE_PATTERNS: readonly (readonly [pattern: RegExp, code: ErrorCode])[] = [
  [CONTEXT_OVERFLOW_MESSAGE, 'provider.context_overflow'],
  [QUOTA_EXHAUSTED_MESSAGE, 'provider.quota_exhausted'],
  [/rate[ _-]?limit|too many requests|throttl/i, 'provider.rate_limited'],
  [/overloaded|over capacity|service unavailable/i, 'provider.overloaded'],
  [/timed? ?out|timeout/i, 'network.timeout'],
  [
    /socket hang up|connection (?:reset|refused|closed)|other side closed|network (?:error|is unreachable)|fetch failed|premature close/i,
    'network.connection',
  ],
  [/invalid api[ _-]?key|incorrect api[ _-]?key|unauthori[sz]ed|authentication failed/i, 'provider.auth'],
  [/internal server error|bad gateway/i, 'provider.server_error'],
];

/** The code a message's words point to, or undefined. */
export function codeForMessage(message: string): ErrorCode | undefined {
  for (const [pattern, code] of MESSAGE_PATTERNS) {
    if (pattern.test(message)) return code;
  }
  return undefined;
}

const TRY_AGAIN_IN =
  /(?:try again|retry) (?:in|after) ((?:\d+(?:\.\d+)?(?:ms|h|m|s))+|\d+(?:\.\d+)? ?seconds?)/i;

/** The wait a rate-limit message asks for (OpenAI: "Please try again in 20s."), as text, or undefined. */
export function retryHintInMessage(message: string): string | undefined {
  const match = TRY_AGAIN_IN.exec(message);
  if (match === null) return undefined;
  return match[1]!.replace(/ ?seconds?$/i, 's');
}
