// Hosted models in place of the simulated ones (getting started shows this region). Each reads its API key from the
// environment and sends nothing until a run calls it: the tests build them with placeholder keys and call neither.
// #region hosted-models
import { anthropic } from '@keel/anthropic';
import { openai } from '@keel/openai';

// #endregion

/** The primary model and its fallback, on OpenAI and Anthropic. */
export function hostedModels() {
  // #region hosted-models
  const model = openai('gpt-4.1-mini', { env: process.env }); // reads OPENAI_API_KEY
  const fallbackModel = anthropic('claude-haiku-4-5', { env: process.env }); // reads ANTHROPIC_API_KEY
  // #endregion
  return { model, fallbackModel };
}
