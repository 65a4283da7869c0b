import type { LanguageModelV3 } from '@ai-sdk/provider';
import { KeelError } from '@keel/core';

/**
 * Checks that `value` is an AI SDK language model keel can call: an object of specification v3 (the AI SDK 6
 * providers) with `doGenerate` and `doStream`. The message says what to pass instead of a model id string or a
 * provider of the previous specification.
 */
export function checkLanguageModel(value: unknown, where: string): asserts value is LanguageModelV3 {
  const fail = (message: string): never => {
    throw new KeelError('config.invalid', `${where}: ${message}`);
  };
  if (typeof value === 'string') {
    fail(
      `got the model id "${value}"; pass a model object such as createOpenAI({ apiKey }).chat("${value}") (a string would go through the AI Gateway, which keel never uses unasked)`,
    );
  }
  if (typeof value !== 'object' || value === null)
    fail(`must be an AI SDK language model, got ${typeof value}`);
  const model = value as Partial<LanguageModelV3> & { specificationVersion?: unknown };
  if (model.specificationVersion !== 'v3') {
    fail(
      `the model implements the AI SDK's language model specification ${JSON.stringify(model.specificationVersion)}, not v3: use a provider package made for ai 6 (such as @ai-sdk/openai 3.x)`,
    );
  }
  if (typeof model.doGenerate !== 'function' || typeof model.doStream !== 'function')
    fail('must have doGenerate and doStream methods');
  if (typeof model.provider !== 'string' || typeof model.modelId !== 'string')
    fail('must have string provider and modelId');
}
