// The public surface of @keel/anthropic. Every name is exported explicitly.
export { type AnthropicOptions, anthropic } from './anthropic.js';
export { MIN_THINKING_BUDGET_TOKENS, type ThinkingOptions } from './thinking.js';
