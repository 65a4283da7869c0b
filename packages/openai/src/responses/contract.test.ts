// The ModelProvider contract of @keel/core/testing over the Responses API wire (aborts, cut-off and oversize bodies,
// statuses, the key). What only this provider does is tested beside it.
import { type ModelProviderWire, modelProviderContract, type WireErrorKind } from '@keel/core/testing';
import { openaiResponses } from '../index.js';

const response = (status: string, output: unknown[]) => ({
  id: 'resp_contract',
  object: 'response',
  model: 'm',
  status,
  output,
  usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
});
const message = (text: string) => ({
  type: 'message',
  id: 'msg_contract',
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text, annotations: [] }],
});
const event = (type: string, fields: Record<string, unknown>) => ({ event: type, data: { type, ...fields } });

const ERRORS: Record<WireErrorKind, { type: string; code: string | null }> = {
  rate_limit: { type: 'requests', code: 'rate_limit_exceeded' },
  server: { type: 'server_error', code: null },
  auth: { type: 'invalid_request_error', code: 'invalid_api_key' },
};

/** The Responses API wire (`/v1/responses`): a `response` body, OpenAI error bodies, and typed stream events. */
const openaiResponsesWire: ModelProviderWire = {
  answer: (text) => response('completed', [message(text)]),
  error: (kind, text) => ({ error: { message: text, param: null, ...ERRORS[kind] } }),
  stream: {
    start: [
      event('response.created', { sequence_number: 0, response: response('in_progress', []) }),
      event('response.output_item.added', { sequence_number: 1, output_index: 0, item: message('') }),
    ],
    text: (text) =>
      event('response.output_text.delta', {
        sequence_number: 2,
        output_index: 0,
        content_index: 0,
        delta: text,
      }),
    end: [
      event('response.completed', {
        sequence_number: 9,
        response: response('completed', [message('Hello')]),
      }),
    ],
    error: (body) => {
      const error = (body as { error: { code: string | null; message: string; type: string } }).error;
      return event('error', {
        sequence_number: 3,
        code: error.code ?? error.type,
        message: error.message,
        param: null,
      });
    },
  },
};

modelProviderContract({
  name: 'openaiResponses',
  wire: openaiResponsesWire,
  create: (baseUrl, { apiKey, fetch, maxResponseBytes }) =>
    openaiResponses('gpt-test', { baseUrl, apiKey: apiKey ?? 'sk-unused', fetch, maxResponseBytes }),
});
