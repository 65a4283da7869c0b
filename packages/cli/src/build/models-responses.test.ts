import { parseAgentFile } from '@keel/agent-file';
import { sendJson, startHttpTestServer } from '@keel/core/testing';
import { describe, expect, it } from 'vitest';
import { resolveModels } from './models.js';

describe('resolveModels: api: responses', () => {
  it('builds an openaiResponses provider that posts to /responses', async () => {
    const server = await startHttpTestServer((_request, reply) =>
      sendJson(reply, 200, {
        id: 'resp_1',
        object: 'response',
        model: 'gpt-5-mini',
        status: 'completed',
        output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hi' }] }],
        usage: { input_tokens: 1, output_tokens: 1 },
      }),
    );
    try {
      const file = parseAgentFile(
        `name: a\nmodel: { provider: openai, name: gpt-5-mini, api: responses, baseUrl: "${server.url}/v1", apiKeyEnv: OPENAI_API_KEY }`,
        'agent.yaml',
        [],
        { allowedKeyHosts: ['127.0.0.1'] },
      );
      const models = resolveModels(file, { environment: { OPENAI_API_KEY: 'sk-test' } });
      const answer = await models.model.generate({
        messages: [{ role: 'user', content: 'Hi' }],
        signal: new AbortController().signal,
      });
      expect(answer.content).toBe('hi');
      expect(server.requests[0]!.url).toBe('/v1/responses');
      expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-test');
    } finally {
      await server.close();
    }
  });
});
