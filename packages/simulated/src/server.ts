import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type JsonValue, KeelError, systemClock } from '@keel/core';
import type { BrainRequest } from './brain.js';
import { estimateTokens, promptTokens } from './completion.js';
import { DELIVERY_FAULTS, deliveryOf, sendCompletion, sendMalformed } from './completion-replies.js';
import { defaultBrain } from './default-brain.js';
import { emptyFaultCounts, type FaultKind, type FaultSchedule, scheduledFault } from './faults.js';
import { errorBody, isStatusFault, type StatusFault, sendJson, sendStatusFault } from './http-replies.js';
import { outageAt } from './outages.js';
import { randomAt } from './prng.js';
import { maxTokensOf, QuotaWindows } from './quota.js';
import { sendResponses, sendResumedEvents } from './responses-replies.js';
import { parseResponsesRequest } from './responses-request.js';
import {
  checkModelOptions,
  checkServerOptions,
  resolveModel,
  type SimulatedModelOptions,
  type SimulatedServerOptions,
  toSimulatedFaults,
} from './server-options.js';
import { shapeReply } from './shape-reply.js';

type StoredEvents = { event: string; data: Record<string, JsonValue> }[];

import { isRecord } from './schema-values.js';
import { parseChatRequest } from './wire-request.js';

const MAX_BODY_BYTES = 32 * 1024 * 1024;
const DEFAULT_RETRY_AFTER_MS = 1000;
const SCHEDULED_WINDOW_TOKENS = 8192;

/** One request the simulated server received, and what it did with it. */
export interface SimulatedRequestRecord {
  /** Position among all requests the server received, from 0. */
  readonly index: number;
  readonly method: string;
  readonly path: string;
  /** The model named in a chat completion request. */
  readonly model: string | undefined;
  /** Position among the requests for `model`, from 0: the index the fault schedule is read at. */
  readonly modelIndex: number | undefined;
  readonly stream: boolean;
  /** The fault the schedule chose for this request (`none` for requests that are not chat completions). */
  readonly scheduled: FaultKind;
  /**
   * What the server actually did: the scheduled fault, `context_overflow` or `max_tokens` when the request itself
   * caused one, or `none` (also when a scheduled reply fault could not apply, such as `invalid_tool_arguments` with
   * no tools offered).
   */
  readonly fault: FaultKind;
  /** The HTTP status sent; undefined while the request hangs or when the connection was reset first. */
  readonly status: number | undefined;
  /** The parsed JSON body, when there was one. */
  readonly body: JsonValue | undefined;
  /** When the request arrived, from the server's clock (milliseconds since the epoch). */
  readonly receivedAtMs: number;
  /**
   * When the exchange ended (the reply finished, or the connection closed or was reset), from the server's clock;
   * undefined while it lasts.
   */
  readonly endedAtMs: number | undefined;
  /** Whether the request arrived while its model was down (inside one of its outage windows). */
  readonly down: boolean;
  /** The prompt's size as the server counts it (four characters a token), for chat completions. */
  readonly promptTokens: number | undefined;
  /** The answer's size as the server counts it (four characters a token), once a completion was sent. */
  readonly completionTokens: number | undefined;
  /** Why the brain failed, when it threw (the client got a 500). */
  readonly brainError: string | undefined;
}

type MutableRecord = { -readonly [K in keyof SimulatedRequestRecord]: SimulatedRequestRecord[K] };

/** A running simulated server. */
export interface SimulatedServer {
  /** Base URL ending in `/v1`, such as `http://127.0.0.1:43123/v1`. */
  readonly url: string;
  /** Every request received so far, in arrival order. */
  readonly requests: readonly SimulatedRequestRecord[];
  /** How many chat completion requests got each fault kind (`none` included). */
  readonly stats: Readonly<Record<FaultKind, number>>;
  /** The moment outage windows count from (`clock.now()` time, milliseconds since the epoch). */
  readonly epochMs: number;
  /** Adds or replaces a model's settings; requests already counted keep their positions. */
  configureModel(model: string, options: SimulatedModelOptions): void;
  /** Stops listening and destroys every connection, hanging requests included. Resolves once closed. */
  close(): Promise<void>;
}

/**
 * Starts an OpenAI Chat Completions-compatible server on 127.0.0.1 that answers with a deterministic brain and
 * injects faults on a seeded schedule. It serves `POST /v1/chat/completions` (streamed with `stream: true`), the
 * Responses API's `POST /v1/responses` (the same brain and faults; typed stream events; a reasoning item when the
 * request asks for reasoning, which a request with `store: false` must send back before the function calls it led
 * to) and `GET /v1/models`. Throws a `config.invalid` KeelError on bad options.
 *
 * @example
 *   const server = await startSimulatedServer({ faults: 'rate_limit=0.2,server_error=0.1,seed=7' });
 *   const response = await fetch(`${server.url}/chat/completions`, { method: 'POST', body: JSON.stringify({
 *     model: 'sim-primary', messages: [{ role: 'user', content: 'Hello' }] }) });
 *   await server.close();
 */
export async function startSimulatedServer(options: SimulatedServerOptions = {}): Promise<SimulatedServer> {
  checkServerOptions(options);
  const clock = options.clock ?? systemClock;
  const epochMs = options.epochMs ?? clock.now();
  const faults = toSimulatedFaults(options.faults);
  const quota = options.quota === undefined ? undefined : new QuotaWindows(options.quota, clock);
  const models = new Map<string, { options: SimulatedModelOptions; faults: FaultSchedule | undefined }>();
  const configureModel = (model: string, modelOptions: SimulatedModelOptions) => {
    if (typeof model !== 'string' || model === '') {
      throw new KeelError('config.invalid', 'configureModel needs a non-empty model name');
    }
    models.set(model, { options: { ...modelOptions }, faults: checkModelOptions(model, modelOptions) });
  };
  for (const [model, modelOptions] of Object.entries(options.models ?? {}))
    configureModel(model, modelOptions);

  const requests: MutableRecord[] = [];
  const stats = emptyFaultCounts();
  const counters = new Map<string, number>();
  // The events of background responses (Responses API, `background: true`), by id, for resumed streams.
  const backgroundStreams = new Map<string, StoredEvents>();

  const handle = async (request: IncomingMessage, response: ServerResponse, record: MutableRecord) => {
    const { path } = record;
    const headers = { 'x-request-id': `req_sim_${record.index}` };
    const reply = (status: number, body: JsonValue, extra: Record<string, string> = {}) => {
      record.status = status;
      sendJson(response, status, body, { ...headers, ...extra });
    };
    if (options.apiKey !== undefined && request.headers.authorization !== `Bearer ${options.apiKey}`) {
      return reply(401, errorBody('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key'));
    }
    if (path === '/v1/models' && record.method === 'GET') {
      const names = [...new Set([...models.keys(), ...Object.keys(faults.models), ...counters.keys()])];
      const data = names.map((id) => ({ id, object: 'model', created: 0, owned_by: 'keel-simulated' }));
      return reply(200, { object: 'list', data });
    }
    const resumedId = path.startsWith('/v1/responses/') ? path.slice('/v1/responses/'.length) : undefined;
    if (resumedId !== undefined && record.method === 'GET') {
      // A background response's stream, picked up again after the event `starting_after` names.
      const events = backgroundStreams.get(decodeURIComponent(resumedId));
      if (events === undefined) {
        return reply(
          404,
          errorBody(`No response found with id '${resumedId}'.`, 'invalid_request_error', null),
        );
      }
      const after = Number(
        new URL(request.url ?? '/', 'http://simulated').searchParams.get('starting_after') ?? -1,
      );
      record.status = 200;
      sendResumedEvents(response, events, Number.isFinite(after) ? after : -1, headers);
      return;
    }
    const responsesWire = path === '/v1/responses';
    if (path !== '/v1/chat/completions' && !responsesWire) {
      return reply(
        404,
        errorBody(`Invalid URL (${record.method} ${path})`, 'invalid_request_error', 'unknown_url'),
      );
    }
    if (record.method !== 'POST') {
      return reply(
        405,
        errorBody(`Method ${record.method} not allowed; use POST`, 'invalid_request_error', null),
      );
    }
    const text = await readBody(request);
    if (text === undefined)
      return reply(413, errorBody('Request body too large.', 'invalid_request_error', null));
    let body: JsonValue;
    try {
      body = JSON.parse(text) as JsonValue;
    } catch {
      return reply(
        400,
        errorBody('We could not parse the JSON body of your request.', 'invalid_request_error', null),
      );
    }
    record.body = body;
    const parsed = responsesWire ? parseResponsesRequest(body) : parseChatRequest(body);
    if (!parsed.ok) return reply(400, errorBody(parsed.message, 'invalid_request_error', null, parsed.param));

    const chat = parsed.request;
    const modelIndex = counters.get(chat.model) ?? 0;
    counters.set(chat.model, modelIndex + 1);
    const settings = resolveModel(chat.model, faults, models, options);
    record.model = chat.model;
    record.modelIndex = modelIndex;
    record.stream = parsed.stream;
    record.promptTokens = promptTokens(chat.messages, chat.tools);
    if (quota !== undefined) {
      const decision = quota.take(
        request.headers.authorization ?? '',
        record.promptTokens + maxTokensOf(body),
      );
      Object.assign(headers, decision.headers);
      if (decision.refused) {
        record.fault = 'rate_limit';
        stats.rate_limit += 1;
        return reply(
          429,
          errorBody(
            'Rate limit reached for requests or tokens per window.',
            'requests',
            'rate_limit_exceeded',
          ),
        );
      }
    }
    const outage = outageAt(settings.outages, record.receivedAtMs - epochMs);
    record.down = outage !== undefined;
    record.scheduled = outage ?? scheduledFault(settings.faults, modelIndex);
    const decide = (fault: FaultKind) => {
      record.fault = fault;
      stats[fault] += 1;
    };
    const tokens = record.promptTokens;
    const window = settings.contextWindowTokens;
    const scheduled = record.scheduled;
    if (isStatusFault(scheduled) || (window !== undefined && tokens > window)) {
      const fault: StatusFault = isStatusFault(scheduled) ? scheduled : 'context_overflow';
      decide(fault);
      record.status = sendStatusFault(
        response,
        fault,
        {
          model: chat.model,
          retryAfterMs: settings.faults.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS,
          contextWindowTokens: window ?? SCHEDULED_WINDOW_TOKENS,
          promptTokens: tokens,
        },
        { ...headers, 'x-simulated-fault': fault },
      );
      return;
    }
    if (scheduled === 'hang' || (scheduled === 'stall' && !parsed.stream)) {
      decide(scheduled);
      const { hangMs } = settings.faults;
      if (hangMs !== undefined) {
        // Cut without a byte sent, as a proxy's idle timeout does; a client that gave up first closed it already.
        const timer = clock.setTimeout(() => request.socket.destroy(), hangMs);
        response.once('close', () => clock.clearTimeout(timer));
      }
      return;
    }
    const faultHeaders = { ...headers, 'x-simulated-fault': scheduled };
    if (scheduled === 'malformed_json') {
      decide('malformed_json');
      record.status = 200;
      return sendMalformed(response, parsed.stream, faultHeaders);
    }

    const brain = settings.brain ?? defaultBrain;
    let brainReply: Awaited<ReturnType<typeof brain>>;
    try {
      const brainRequest: BrainRequest = { ...chat, index: modelIndex };
      brainReply = await brain(brainRequest);
    } catch (error) {
      decide('none');
      record.brainError = error instanceof Error ? error.message : String(error);
      return reply(
        500,
        errorBody(`The simulated brain failed: ${record.brainError}`, 'server_error', 'brain_error'),
      );
    }
    const replyFault = DELIVERY_FAULTS.has(scheduled) ? 'none' : scheduled;
    const shaped = shapeReply(brainReply, chat, {
      fault: replyFault,
      requestIndex: record.index,
      parallelToolCalls: parsed.parallelToolCalls,
    });
    const delivery = deliveryOf(
      scheduled,
      randomAt(((settings.faults.seed ?? 1) ^ 0x5bd1e995) >>> 0, record.index),
      (stalled) => {
        const { hangMs } = settings.faults;
        if (hangMs === undefined) return;
        const timer = clock.setTimeout(() => stalled.socket?.destroy(), hangMs);
        stalled.once('close', () => clock.clearTimeout(timer));
      },
    );
    decide(delivery === 'whole' ? shaped.fault : scheduled);
    record.status = 200;
    const completionTokens = estimateTokens(
      shaped.content + shaped.toolCalls.map((call) => call.name + call.arguments).join(''),
    );
    record.completionTokens = completionTokens;
    if (responsesWire) {
      const parts = {
        id: `resp_sim_${record.index}`,
        created: Math.floor(Date.now() / 1000),
        model: chat.model,
        content: shaped.content,
        toolCalls: shaped.toolCalls,
        finishReason: shaped.finishReason,
        promptTokens: tokens,
        completionTokens,
        // A request that asks for reasoning gets a reasoning item, to be sent back with the calls it led to.
        reasoning: isRecord(body) && isRecord(body.reasoning),
      };
      const replyHeaders = { ...headers, 'x-simulated-fault': record.fault };
      const keep =
        isRecord(body) && body.background === true
          ? (events: StoredEvents) => backgroundStreams.set(parts.id, events)
          : undefined;
      sendResponses(response, parts, { stream: parsed.stream, delivery, keep }, replyHeaders);
      return;
    }
    sendCompletion(
      response,
      {
        id: `chatcmpl-sim-${record.index}`,
        created: Math.floor(Date.now() / 1000),
        model: chat.model,
        content: shaped.content,
        toolCalls: shaped.toolCalls,
        finishReason: shaped.finishReason,
        promptTokens: tokens,
        completionTokens,
      },
      { stream: parsed.stream, includeUsage: parsed.includeUsage, delivery },
      { ...headers, 'x-simulated-fault': record.fault },
    );
  };

  const server = createServer((request, response) => {
    const record: MutableRecord = {
      index: requests.length,
      method: request.method ?? 'GET',
      path: (request.url ?? '/').split('?')[0]!,
      model: undefined,
      modelIndex: undefined,
      stream: false,
      scheduled: 'none',
      fault: 'none',
      status: undefined,
      body: undefined,
      brainError: undefined,
      receivedAtMs: clock.now(),
      endedAtMs: undefined,
      down: false,
      promptTokens: undefined,
      completionTokens: undefined,
    };
    requests.push(record);
    response.once('close', () => {
      record.endedAtMs = clock.now();
    });
    handle(request, response, record)
      .catch((error: unknown) => {
        // The client went away mid-request (or the reply was already under way): nothing more can be sent.
        if (response.headersSent || request.destroyed) return void response.destroy();
        record.status = 500;
        sendJson(
          response,
          500,
          errorBody(`Simulated server failure: ${String(error)}`, 'server_error', null),
        );
      })
      .then(() => {
        try {
          options.onRequest?.(record);
        } catch {
          // A listener's failure must not change what the client sees.
        }
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  if (options.keepProcessAlive === false) server.unref();
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    get stats() {
      return { ...stats };
    },
    epochMs,
    configureModel,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Hanging requests and idle keep-alive connections would otherwise hold `close` open forever.
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** The request body as text; undefined when it exceeds the size limit. */
async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
