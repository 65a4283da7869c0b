import { inspect } from 'node:util';
import { KeelError } from '../errors/keel-error.js';
import { serializeError } from '../errors/serialize.js';
import type { ModelProvider, ModelRequest } from '../spec/model.js';
import {
  type HttpTestServer,
  type ServerSentEvent,
  startHttpTestServer,
  startSse,
  type TestRequestHandler,
  writeSse,
} from './http-test-server.js';
import type { ModelProviderWire } from './model-provider-wire.js';

/** What {@link modelProviderContract} hands `create`. */
export interface ModelProviderContractSettings {
  /** The API key to send; the suite checks it reaches the server and never comes back. */
  apiKey: string;
  /** The fetch to call. The suite passes the global one, or one wrapped to abort at a chosen moment. */
  fetch: typeof globalThis.fetch;
  /** The largest successful response to read, in bytes. Set only by the oversize cases; undefined otherwise. */
  maxResponseBytes?: number;
}

/** A provider under the contract: how to make it and which wire it speaks. */
export interface ModelProviderContractDefinition {
  /** The name in the suite's title, such as `openaiCompatible` or `fromAiSdk(@ai-sdk/openai)`. */
  name: string;
  /** Makes the provider under test, sending to `serverUrl` (the test server's base URL, no trailing slash). */
  create(serverUrl: string, settings: ModelProviderContractSettings): ModelProvider;
  /** How the provider's wire format writes answers, errors and streams. */
  wire: ModelProviderWire;
  /**
   * Whether `create` honours `settings.maxResponseBytes`: the oversize cases run only then. Defaults to true, the
   * providers built on `@keel/core/http`.
   */
  maxResponseBytes?: boolean;
  /**
   * Whether a stream that ends cleanly before its end (finish reason, terminator) fails with
   * `provider.invalid_response` rather than passing for a whole answer. Defaults to true.
   */
  requiresStreamEnd?: boolean;
  /**
   * Whether a streamed call answered with a whole JSON body (a proxy that ignores `stream: true`) succeeds, its text
   * delivered as one delta. Defaults to true.
   */
  acceptsUnstreamedAnswer?: boolean;
}

/**
 * The keys the redaction cases give the provider, by shape: of no shape a pattern knows (a Groq key, 32 hex digits, a
 * short `sk-` key), so only removing the exact value keeps them out.
 */
export const CONTRACT_KEYS = {
  groq: 'gsk_8fQzK2mXw9LpR4vT7yN1bC6dH3jE5aS0uI8oP2qW4eR6tY9uXz',
  hex: '9f86d081884c7d659a2feaa0c55ad015',
  'short sk-': 'sk-4f9Qz1',
} as const;

/** The key the other cases give the provider. */
export const CONTRACT_API_KEY = CONTRACT_KEYS.groq;

/** The per-test state of a contract suite: the server of the test in progress, closed after it. */
export interface ContractHarness {
  readonly definition: ModelProviderContractDefinition;
  readonly wire: ModelProviderWire;
  /** The server of the current test; throws before {@link ContractHarness.serve}. */
  server(): HttpTestServer;
  /** Starts the current test's server. */
  serve(handler: TestRequestHandler): Promise<HttpTestServer>;
  /** Starts a server that writes `events` as a stream, then ends it (`end`) or destroys the socket (`cut`). */
  serveStream(events: readonly ServerSentEvent[], finish: 'end' | 'cut' | 'open'): Promise<HttpTestServer>;
  /** The provider under test, on the current server. */
  model(settings?: Partial<ModelProviderContractSettings>): ModelProvider;
  /**
   * Calls `generate` once and returns the KeelError it rejects with; fails the test when it resolves or rejects with
   * anything else, and checks exactly one request was sent and the error names the provider.
   */
  failure(
    overrides?: Partial<ModelRequest>,
    settings?: Partial<ModelProviderContractSettings>,
  ): Promise<KeelError>;
  close(): Promise<void>;
}

/** Makes the harness of one suite. */
export function contractHarness(definition: ModelProviderContractDefinition): ContractHarness {
  let current: HttpTestServer | undefined;
  const server = (): HttpTestServer => {
    if (current === undefined) throw new Error('the contract test has not started its server');
    return current;
  };
  const model = (settings: Partial<ModelProviderContractSettings> = {}): ModelProvider =>
    definition.create(server().url, { apiKey: CONTRACT_API_KEY, fetch: globalThis.fetch, ...settings });
  const serve = async (handler: TestRequestHandler): Promise<HttpTestServer> => {
    current = await startHttpTestServer(handler);
    return current;
  };
  return {
    definition,
    wire: definition.wire,
    server,
    serve,
    serveStream: (events, finish) =>
      serve((_request, response) => {
        startSse(response);
        writeSse(response, events);
        if (finish === 'end') response.end();
        // Destroyed once the events are flushed, so the client sees them and then a cut-off stream.
        else if (finish === 'cut') response.write('', () => response.destroy());
      }),
    model,
    async failure(overrides = {}, settings = {}) {
      const provider = model(settings);
      const error = await provider.generate(contractRequest(overrides)).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      if (server().requests.length !== 1)
        throw new Error(`expected exactly one request, the server received ${server().requests.length}`);
      if (!KeelError.isInstance(error)) throw new Error(`expected a KeelError, got ${String(error)}`);
      if (error.provider !== provider.provider)
        throw new Error(`expected the error to name ${provider.provider}, got ${String(error.provider)}`);
      return error;
    },
    async close() {
      await current?.close();
      current = undefined;
    },
  };
}

/** A one-message request with a signal nobody aborts, unless overridden. */
export function contractRequest(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { messages: [{ role: 'user', content: 'Hi' }], signal: new AbortController().signal, ...overrides };
}

/** A fetch that aborts `controller` with `reason` as soon as the response head has arrived, body still pending. */
export function fetchThenAbort(controller: AbortController, reason: unknown): typeof globalThis.fetch {
  return async (input, init) => {
    const response = await globalThis.fetch(input, init);
    controller.abort(reason);
    return response;
  };
}

/** Every form a value takes downstream: inspected (as console.log prints it), JSON, serialised, text, stack. */
export function renderings(value: unknown): string[] {
  const texts = [inspect(value, { depth: 20 }), inspect(value, { depth: 20, showHidden: true })];
  texts.push(JSON.stringify(value) ?? '');
  if (value instanceof Error) {
    texts.push(JSON.stringify(serializeError(value)), String(value), String(value.stack));
  }
  return texts;
}

/** Where `key` shows in any rendering of `value`, for a failure message; undefined when it shows nowhere. */
export function keyShownIn(value: unknown, key: string): string | undefined {
  return renderings(value).find((text) => text.includes(key));
}
