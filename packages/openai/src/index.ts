// The public surface of @keel/openai. Every name is exported explicitly.
export {
  type OpenAICommonOptions,
  type OpenAICompatibleOptions,
  type OpenAIOptions,
  openai,
  openaiCompatible,
} from './openai.js';
export type { MaxTokensField, ReasoningEffort } from './request-body.js';
export type { ReasoningSummary } from './responses/request-body.js';
export { type OpenAIResponsesOptions, openaiResponses } from './responses/responses.js';
