import { createOpenAI } from '@ai-sdk/openai';
import type { AgentFile } from '@keel/agent-file';
import { CHILD_TOOL, type ChaosSubject, type RunEnding } from '@keel/chaos';
import {
  AISDKError,
  APICallError,
  generateText,
  type JSONSchema7,
  jsonSchema,
  RetryError,
  stepCountIs,
  streamText,
  tool,
} from 'ai';
import { typedFailure, untypedEnding } from './endings.js';
import { peerTools, toolContext } from './peer-tools.js';

/**
 * The Vercel AI SDK as its users set it up: `generateText` with the agent file's tools and step bound
 * (`stopWhen: stepCountIs(maxTurns)`: an agent loop), the default `maxRetries` (2), no timeout, over
 * `@ai-sdk/openai`'s Chat Completions model (`provider.chat`, since the simulated server speaks Chat Completions, not
 * the Responses API that `provider(model)` picks) pointed at the simulated server. No fallback: the SDK has none.
 *
 * In a nested scenario the parent's one tool runs the child as the AI SDK's documentation writes a subagent: a
 * `tool()` whose `execute` calls `generateText` with the file's tools on the child's model and returns its text. A
 * child that throws reaches the parent's model as the SDK's tool error (the error's message).
 */
export function aiSdkSubject(file: AgentFile, worker: ChaosSubject['worker']): ChaosSubject {
  const maxTurns = file.limits.maxTurns ?? 20;
  return {
    name: 'ai-sdk',
    fallbacks: 0,
    ...(worker === undefined ? {} : { worker }),
    nests: true,
    async prepare(environment) {
      const provider = createOpenAI({ baseURL: environment.baseUrl, apiKey: 'simulated' });
      const model = provider.chat(environment.models[0]!.name);
      const childModel =
        environment.child === undefined ? undefined : provider.chat(environment.child.models[0]!.name);
      const keelTools = peerTools(file, environment);
      return {
        async run({ runId, task, signal }): Promise<RunEnding> {
          const fileTools = Object.fromEntries(
            keelTools.map((keelTool) => [
              keelTool.name,
              tool({
                description: keelTool.description,
                inputSchema: jsonSchema(keelTool.inputSchema as JSONSchema7),
                execute: (input, { toolCallId, abortSignal }) =>
                  keelTool.execute(input, toolContext(runId, toolCallId, abortSignal)),
              }),
            ]),
          );
          const tools =
            childModel === undefined
              ? fileTools
              : {
                  [CHILD_TOOL.name]: tool({
                    description: CHILD_TOOL.description,
                    inputSchema: jsonSchema<{ prompt: string }>({
                      type: 'object',
                      properties: { prompt: { type: 'string' } },
                      required: ['prompt'],
                      additionalProperties: false,
                    }),
                    execute: async ({ prompt }, { abortSignal }) => {
                      const child = await generateText({
                        model: childModel,
                        ...(file.instructions === undefined ? {} : { system: file.instructions }),
                        prompt,
                        tools: fileTools,
                        stopWhen: stepCountIs(maxTurns),
                        ...(abortSignal === undefined ? {} : { abortSignal }),
                      });
                      return child.text;
                    },
                  }),
                };
          try {
            const settings = {
              model,
              ...(file.instructions === undefined ? {} : { system: file.instructions }),
              prompt: task,
              tools,
              stopWhen: stepCountIs(maxTurns),
              abortSignal: signal,
            };
            if (environment.stream === true) {
              // Streamed as its users stream: `streamText`, the text consumed as it arrives; an error mid-stream
              // rejects the result's promises (the AI SDK does not retry it).
              let streamError: unknown;
              const result = streamText({
                ...settings,
                onError: ({ error }) => {
                  streamError ??= error;
                },
              });
              for await (const _ of result.textStream) {
                // Consumed as a UI would.
              }
              if (streamError !== undefined) throw streamError;
              return { status: 'completed', output: await result.text, typed: true };
            }
            const result = await generateText(settings);
            return { status: 'completed', output: result.text, typed: true };
          } catch (error) {
            return aiSdkEnding(error);
          }
        },
        close: async () => undefined,
      };
    },
  };
}

/** An AI SDK error by its name, with the HTTP status of the call that failed (`AI_RetryError(AI_APICallError:503)`). */
function aiSdkEnding(error: unknown): RunEnding {
  if (!AISDKError.isInstance(error)) return untypedEnding(error);
  const describe = (failure: unknown): string => {
    if (APICallError.isInstance(failure)) return `${failure.name}:${failure.statusCode ?? 'network'}`;
    return failure instanceof Error ? failure.name : typeof failure;
  };
  const code = RetryError.isInstance(error) ? `${error.name}(${describe(error.lastError)})` : describe(error);
  return typedFailure(code, error);
}
