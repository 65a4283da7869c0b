// The ModelProvider contract of @keel/core/testing over the Responses API wire (aborts, cut-off and oversize bodies,
// statuses, the key, stalls, empty streams), and the recovery of its streams broken mid-answer. What only this provider does is tested beside it.
import {
  type ModelProviderWire,
  modelProviderContract,
  streamRecoveryContract,
  type WireErrorKind,
} from '@keel/core/testing';
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
        // No output listed: the reader answers with the streamed text (the wire's `end` cannot know it).
        response: response('completed', []),
      }),
    ],
    empty: [event('response.created', { sequence_number: 0, response: response('in_progress', []) })],
    toolAnswer: (text, call) => {
      const whole = text.join('');
      const functionCall = (argumentsText: string) => ({
        type: 'function_call',
        id: 'fc_contract',
        call_id: call.id,
        name: call.name,
        arguments: argumentsText,
        status: 'completed',
      });
      const events = [
        event('response.created', { response: response('in_progress', []) }),
        event('response.output_item.added', { output_index: 0, item: message('') }),
        ...text.map((delta) =>
          event('response.output_text.delta', { output_index: 0, content_index: 0, delta }),
        ),
        event('response.output_item.done', { output_index: 0, item: message(whole) }),
        event('response.output_item.added', { output_index: 1, item: functionCall('') }),
        ...call.arguments.map((delta) =>
          event('response.function_call_arguments.delta', { output_index: 1, delta }),
        ),
        event('response.output_item.done', { output_index: 1, item: functionCall(call.arguments.join('')) }),
        event('response.completed', {
          response: response('completed', [message(whole), functionCall(call.arguments.join(''))]),
        }),
      ];
      return events.map((each, sequence) => ({ ...each, data: { ...each.data, sequence_number: sequence } }));
    },
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

// A Responses stream broken mid-answer (inside text, inside a function call's arguments, between events) recovers.
streamRecoveryContract({
  name: 'openaiResponses',
  wire: openaiResponsesWire,
  create: (baseUrl) => openaiResponses('gpt-test', { baseUrl, apiKey: 'sk-unused' }),
});
