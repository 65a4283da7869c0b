import type { ErrorCode } from './codes.js';

/** What the user (or the model) can do about a classified fault, where there is something to do. */
const GUIDANCE: Partial<Record<ErrorCode, string>> = {
  'provider.rate_limited':
    'The provider is limiting the request rate: wait before retrying, or lower concurrency.',
  'provider.quota_exhausted':
    'The account has run out of quota or credit: add credit or raise the usage limit; retrying will not help.',
  'provider.auth': 'Check the API key and that it is allowed to use this model.',
  'provider.context_overflow':
    'The request is larger than the model accepts: shorten the conversation or trim large tool outputs and attachments.',
  'provider.bad_request':
    'The provider rejected the request: check the model name and the request parameters.',
  'provider.not_found': 'Check the model name and the base URL.',
  'policy.budget_exhausted':
    'A budget refused the call before it was sent: raise the budget named in data.budget (budgets.limits, or retry.runBudget for retries), wait for its period to renew, or ask for less output.',
  'provider.content_filter': "The provider's content filter refused the request: rephrase it.",
  'tool.outcome_unknown':
    'The call may or may not have taken effect: do not call it again with the same arguments. Check its effect another way, or tell the user the outcome is unknown.',
  'provider.response_too_large':
    "The provider's response was larger than maxResponseBytes allows: ask for less output (maxOutputTokens) or raise maxResponseBytes.",
  'provider.redirect_refused':
    'The provider redirected the request to another origin, and keel does not send credentials or conversations there: if you trust that address, set baseUrl to it.',
};

/** The default guidance for a code, naming the provider when known. */
export function guidanceFor(code: ErrorCode, provider: string | undefined): string | undefined {
  const text = GUIDANCE[code];
  if (text === undefined || provider === undefined) return text;
  return text.replace('The provider', provider).replace('the API key', `the ${provider} API key`);
}
