import { KeelError } from '@keel/core';
import { REASONING_EFFORTS } from './request-body.js';

/** What every provider option set must satisfy; the messages say what to fix. */
export interface CheckedOptions {
  baseUrl: string;
  model: string;
  provider: string;
  apiKey?: string;
  headers?: Record<string, string>;
  contextWindowTokens?: number;
  fetch?: unknown;
  maxTokensField?: string;
  reasoningEffort?: string;
}

export function validateOptions(options: CheckedOptions): void {
  const fail = (message: string): never => {
    throw new KeelError('config.invalid', `${options.provider ?? 'openai'}: ${message}`);
  };
  if (typeof options.provider !== 'string' || options.provider.trim() === '')
    fail('provider must be a non-empty name');
  if (typeof options.model !== 'string' || options.model.trim() === '')
    fail('model must be a non-empty model name');
  let url: URL | undefined;
  try {
    url = new URL(options.baseUrl);
  } catch {
    fail(`baseUrl must be an absolute http(s) URL, got ${JSON.stringify(options.baseUrl)}`);
  }
  if (url !== undefined && url.protocol !== 'http:' && url.protocol !== 'https:') {
    fail(`baseUrl must use http or https, got ${url.protocol}`);
  }
  if (options.apiKey !== undefined && typeof options.apiKey !== 'string') fail('apiKey must be a string');
  if (options.headers !== undefined) {
    if (typeof options.headers !== 'object' || options.headers === null)
      fail('headers must be an object of strings');
    for (const [name, value] of Object.entries(options.headers)) {
      if (typeof value !== 'string') fail(`header ${name} must be a string`);
    }
  }
  const window = options.contextWindowTokens;
  if (window !== undefined && (!Number.isInteger(window) || window <= 0)) {
    fail('contextWindowTokens must be a positive integer');
  }
  if (options.fetch !== undefined && typeof options.fetch !== 'function') fail('fetch must be a function');
  if (options.maxTokensField !== 'max_tokens' && options.maxTokensField !== 'max_completion_tokens') {
    fail('maxTokensField must be "max_tokens" or "max_completion_tokens"');
  }
  const effort = options.reasoningEffort;
  if (effort !== undefined && !(REASONING_EFFORTS as readonly unknown[]).includes(effort)) {
    fail(
      `reasoningEffort must be one of ${REASONING_EFFORTS.map((value) => `"${value}"`).join(', ')}, got ${JSON.stringify(effort)}`,
    );
  }
}
