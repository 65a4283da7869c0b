// The public surface of @keel/anthropic. Every name is exported explicitly.
export { type AnthropicOptions, anthropic } from './anthropic.js';
