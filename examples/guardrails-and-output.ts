// Guardrails on the input and the output, a structured final answer checked against a schema (the model corrects
// an answer that does not match), and a conversation manager that summarises older turns when the context is full.
//   npm run build && node examples/dist/guardrails-and-output.js
import { fileURLToPath } from 'node:url';
import { agent, guardrail, piiGuardrail, structuredOutput, summarizing } from '@keel/core';
import { simulated } from '@keel/simulated';
import { z } from 'zod';

/** Runs the example. */
export async function main() {
  const model = simulated();
  // #region guardrails-and-output
  const onTopic = guardrail({
    name: 'on-topic',
    stage: 'input',
    check: (text) =>
      /weather|forecast/i.test(text)
        ? { action: 'allow' }
        : {
            action: 'block',
            trigger: 'off_topic',
            message: 'This assistant only answers weather questions.',
          },
  });

  const forecaster = agent({
    model,
    guardrails: [onTopic, piiGuardrail({ stage: 'output', action: 'redact' })],
    outputSchema: structuredOutput({ schema: z.object({ city: z.string(), summary: z.string() }) }),
    // Older turns summarised, the last 8 messages kept word for word, when the conversation outgrows the context.
    conversationManager: summarizing({
      summarize: async (messages) => `${messages.length} earlier messages about the weather`, // or ask a model
      keepRecent: 8,
    }),
  });

  const refused = await forecaster.run('Write me a poem');
  refused.error?.code; // 'guardrail.input': the model was never called

  const answer = await forecaster.run('The weather forecast for Paris, as JSON');
  answer.output; // { city: string; summary: string }, parsed and checked
  // #endregion
  await model.close();
  return { refused: refused.error?.code, status: answer.status, output: answer.output };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await main());
