import { KeelError } from '../errors/keel-error.js';
import type { RateLimitSnapshot } from '../errors/rate-limit-headers.js';
import type {
  FinishReason,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ToolCall,
  Usage,
} from '../spec/model.js';

/** A tool call in a script. `arguments` may be an object (sent as JSON) or raw text (to script invalid JSON). */
export interface ScriptedToolCall {
  /** Defaults to `call_<callIndex>_<position>`. */
  id?: string;
  name: string;
  /** Defaults to `{}`. */
  arguments?: string | Record<string, unknown>;
}

/** What a scripted call answers; every field is optional. */
export interface ScriptedResponse {
  /** Defaults to `''`. */
  content?: string;
  /** Defaults to none. */
  toolCalls?: ScriptedToolCall[];
  /** Defaults to `tool_calls` when there are tool calls, `stop` otherwise. */
  finishReason?: FinishReason;
  /** Missing counts default to 0. */
  usage?: Partial<Usage>;
  /** Defaults to the scripted model's name. */
  model?: string;
  /** How `content` is streamed to `onTextDelta`. Defaults to `[content]` (one delta, none when empty). */
  textDeltas?: string[];
  /** What the answer's rate-limit headers would say (the pace governor reads it). Defaults to none. */
  rateLimit?: RateLimitSnapshot;
}

/** A function step: builds the answer from the request, or throws, or returns an error to throw. */
export type ScriptedStepFunction = (
  request: ModelRequest,
  callIndex: number,
) => ScriptedResponse | Error | Promise<ScriptedResponse | Error>;

/** One step of a script: an answer, an error to throw as it is, or a function of the request. */
export type ScriptedStep = ScriptedResponse | Error | ScriptedStepFunction;

/** Options of {@link scriptedModel}. */
export interface ScriptedModelOptions {
  /** Defaults to `scripted`. */
  provider?: string;
  /** Defaults to `scripted`. */
  model?: string;
  /** Defaults to undefined (unknown). */
  contextWindowTokens?: number;
}

/** A model provider that answers from a script, recording what it was asked. */
export interface ScriptedModel extends ModelProvider {
  /** The requests received so far, in order (each with a copy of its messages as they were at the call). */
  readonly calls: readonly ModelRequest[];
}

/**
 * A model for tests: answers each call with the next step of a script, or with what a function returns.
 * Errors in the script are thrown as they are (a raw `Error` tests the caller's classification). A call past the end
 * of a script array throws `config.invalid`. The request's signal is honoured: an aborted call rejects with the
 * signal's reason, even while a step function is still pending.
 *
 * @example
 *   const model = scriptedModel([
 *     { toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] },
 *     new KeelError('provider.overloaded', 'busy'),
 *     { content: 'Sunny in Paris.' },
 *   ]);
 */
export function scriptedModel(
  script: readonly ScriptedStep[] | ScriptedStepFunction,
  options: ScriptedModelOptions = {},
): ScriptedModel {
  if (!Array.isArray(script) && typeof script !== 'function') {
    throw new KeelError(
      'config.invalid',
      'scriptedModel needs an array of steps or a function of (request, callIndex)',
    );
  }
  const calls: ModelRequest[] = [];
  const provider = options.provider ?? 'scripted';
  const model = options.model ?? 'scripted';

  async function generate(request: ModelRequest): Promise<ModelResponse> {
    const callIndex = calls.length;
    calls.push({ ...request, signal: request.signal, messages: [...request.messages] });
    const { signal } = request;
    if (signal.aborted) throw signal.reason;

    let step: ScriptedStep | undefined;
    if (typeof script === 'function') {
      step = script;
    } else {
      step = (script as readonly ScriptedStep[])[callIndex];
      if (step === undefined) {
        throw new KeelError(
          'config.invalid',
          `scriptedModel was called ${callIndex + 1} times but its script has ${script.length} steps: add steps`,
        );
      }
    }
    const outcome = typeof step === 'function' ? await untilAborted(step(request, callIndex), signal) : step;
    if (outcome instanceof Error) throw outcome;
    const response = toResponse(outcome, callIndex, model);
    if (request.onTextDelta !== undefined) {
      for (const delta of outcome.textDeltas ?? (response.content === '' ? [] : [response.content])) {
        if (signal.aborted) throw signal.reason;
        request.onTextDelta(delta);
      }
    }
    if (signal.aborted) throw signal.reason;
    return response;
  }

  return {
    provider,
    model,
    contextWindowTokens: options.contextWindowTokens,
    calls,
    generate,
  };
}

function toResponse(step: ScriptedResponse, callIndex: number, model: string): ModelResponse {
  const toolCalls: ToolCall[] = (step.toolCalls ?? []).map((call, position) => ({
    id: call.id ?? `call_${callIndex}_${position}`,
    name: call.name,
    arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}),
  }));
  return {
    content: step.content ?? '',
    toolCalls,
    finishReason: step.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
    usage: {
      ...step.usage,
      inputTokens: step.usage?.inputTokens ?? 0,
      outputTokens: step.usage?.outputTokens ?? 0,
    },
    model: step.model ?? model,
    ...(step.rateLimit === undefined ? {} : { rateLimit: step.rateLimit }),
  };
}

/** Resolves as `value` does, or rejects with the signal's reason as soon as it aborts. */
function untilAborted<T>(value: T | Promise<T>, signal: AbortSignal): Promise<T> {
  if (!(value instanceof Promise)) return Promise.resolve(value);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    value.then(
      (result) => {
        signal.removeEventListener('abort', onAbort);
        resolve(result);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
