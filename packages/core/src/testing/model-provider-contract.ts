import { closedPort, sendJson, startSse, writeSse } from './http-test-server.js';
import {
  type ContractHarness,
  contractHarness,
  contractRequest,
  fetchThenAbort,
  type ModelProviderContractDefinition,
} from './model-provider-contract-support.js';
import { modelProviderFailureContract } from './model-provider-failure-contract.js';
import { modelProviderStallContract } from './model-provider-stall-contract.js';
import { afterEach, describe, expect, it } from './vitest-functions.js';

/**
 * The behaviour every HTTP `ModelProvider` must have, run against a real HTTP server on 127.0.0.1 speaking the
 * provider's wire: one request per call; an abort before the call, while waiting for the response head, while
 * reading an error body, a 200 body or a stream, rejects with the signal's reason and closes the connection; a
 * refused connection, a cut-off body or stream, a body over `maxResponseBytes`, a 429 with Retry-After, 5xx and 401
 * statuses and errors mid-stream are classified; a stream that stalls (no first byte, a silence mid-answer) is
 * `network.timeout`; the API key never shows in an error, a run's events or its stored
 * state. The suite owns the cases; `wire` says how the provider's format writes bodies ({@link openaiChatWire},
 * {@link anthropicMessagesWire}, or your own {@link ModelProviderWire}). Call it from a test file.
 *
 * @example
 *   modelProviderContract({
 *     name: 'openaiCompatible',
 *     wire: openaiChatWire,
 *     create: (baseUrl, { apiKey, fetch, maxResponseBytes }) =>
 *       openaiCompatible({ baseUrl, model: 'm', apiKey, fetch, maxResponseBytes }),
 *   });
 */
export function modelProviderContract(definition: ModelProviderContractDefinition): void {
  describe(`ModelProvider contract: ${definition.name}`, () => {
    const harness = contractHarness(definition);
    afterEach(() => harness.close());
    answerCases(harness);
    abortCases(harness);
    transportCases(harness);
    modelProviderFailureContract(harness);
    modelProviderStallContract(harness);
  });
}

function answerCases(harness: ContractHarness): void {
  const { wire } = harness;

  it('answers with one request', async () => {
    await harness.serve((_request, response) => sendJson(response, 200, wire.answer('Hello')));
    const answer = await harness.model().generate(contractRequest());
    expect(answer).toMatchObject({ content: 'Hello', toolCalls: [], finishReason: 'stop' });
    expect(harness.server().requests).toHaveLength(1);
  });

  it('streams text deltas as they arrive and returns the whole answer, with one request', async () => {
    await harness.serveStream(
      [...wire.stream.start, wire.stream.text('Hel'), wire.stream.text('lo'), ...wire.stream.end],
      'end',
    );
    const deltas: string[] = [];
    const answer = await harness
      .model()
      .generate(contractRequest({ onTextDelta: (delta) => deltas.push(delta) }));
    expect(deltas).toEqual(['Hel', 'lo']);
    expect(answer).toMatchObject({ content: 'Hello', toolCalls: [], finishReason: 'stop' });
    expect(harness.server().requests).toHaveLength(1);
  });

  it('sends exactly one request for a retryable failure: retrying is the policy’s job', async () => {
    await harness.serve((_request, response) => sendJson(response, 503, wire.error('server', 'busy')));
    const error = await harness.failure();
    expect(error.retryable).toBe(true);
  });
}

function abortCases(harness: ContractHarness): void {
  const { wire } = harness;
  const reason = new Error('run cancelled');

  it('an already aborted signal sends no request and rejects with its reason', async () => {
    await harness.serve((_request, response) => sendJson(response, 200, wire.answer('Hello')));
    const controller = new AbortController();
    controller.abort(reason);
    await expect(harness.model().generate(contractRequest({ signal: controller.signal }))).rejects.toBe(
      reason,
    );
    expect(harness.server().requests).toHaveLength(0);
  });

  it('an abort while waiting for the response head rejects with the reason and closes the connection', async () => {
    const controller = new AbortController();
    await harness.serve(() => {
      controller.abort(reason);
    });
    await expect(harness.model().generate(contractRequest({ signal: controller.signal }))).rejects.toBe(
      reason,
    );
    expect(await harness.server().requests[0]!.closedEarly).toBe(true);
    expect(harness.server().requests).toHaveLength(1);
  });

  it.each([
    ['an error body', 500, JSON.stringify(wire.error('server', 'Internal server error')).slice(0, 12)],
    ['a 200 body', 200, JSON.stringify(wire.answer('Hello')).slice(0, 20)],
  ])(
    'an abort while reading %s rejects with the reason and closes the connection',
    async (_label, status, head) => {
      const controller = new AbortController();
      await harness.serve((_request, response) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.write(head);
      });
      const model = harness.model({ fetch: fetchThenAbort(controller, reason) });
      await expect(model.generate(contractRequest({ signal: controller.signal }))).rejects.toBe(reason);
      expect(await harness.server().requests[0]!.closedEarly).toBe(true);
    },
  );

  it('an abort while a stream is read, before its first event, rejects with the reason and closes it', async () => {
    const controller = new AbortController();
    await harness.serveStream([], 'open');
    const model = harness.model({ fetch: fetchThenAbort(controller, reason) });
    const request = contractRequest({ signal: controller.signal, onTextDelta: () => undefined });
    await expect(model.generate(request)).rejects.toBe(reason);
    expect(await harness.server().requests[0]!.closedEarly).toBe(true);
  });

  it('an abort mid-stream rejects at once with the reason, delivers nothing after it, and closes the stream', async () => {
    const controller = new AbortController();
    let sendMore: () => void = () => undefined;
    await harness.serve((_request, response) => {
      startSse(response);
      writeSse(response, [...wire.stream.start, wire.stream.text('first')]);
      sendMore = () => writeSse(response, [wire.stream.text('late'), ...wire.stream.end]);
    });
    const deltas: string[] = [];
    const pending = harness.model().generate(
      contractRequest({
        signal: controller.signal,
        onTextDelta: (delta) => {
          deltas.push(delta);
          controller.abort(reason);
        },
      }),
    );
    await expect(pending).rejects.toBe(reason);
    sendMore();
    expect(deltas).toEqual(['first']);
    expect(await harness.server().requests[0]!.closedEarly).toBe(true);
  });
}

function transportCases(harness: ContractHarness): void {
  const { wire, definition } = harness;

  it('a refused connection is network.connection, naming the provider', async () => {
    const port = await closedPort();
    const model = definition.create(`http://127.0.0.1:${port}`, {
      apiKey: 'contract-key',
      fetch: globalThis.fetch,
    });
    const error = await model.generate(contractRequest()).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'network.connection', provider: model.provider });
  });

  it('a 200 body cut off mid-way (socket destroyed) is provider.invalid_response, retryable', async () => {
    const body = JSON.stringify(wire.answer('Hello there'));
    await harness.serve((_request, response) => {
      response.writeHead(200, {
        'content-type': 'application/json',
        'content-length': String(body.length + 100),
      });
      response.write(body.slice(0, body.length - 10), () => response.destroy());
    });
    expect(await harness.failure()).toMatchObject({ code: 'provider.invalid_response', retryable: true });
  });

  it('a 200 body that is not JSON is provider.invalid_response, retryable', async () => {
    await harness.serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('<html>gateway</html>');
    });
    expect(await harness.failure()).toMatchObject({ code: 'provider.invalid_response', retryable: true });
  });

  it('a stream cut off mid-way is provider.invalid_response, retryable, after the deltas it carried', async () => {
    await harness.serveStream([...wire.stream.start, wire.stream.text('Hel')], 'cut');
    const deltas: string[] = [];
    const error = await harness.failure({ onTextDelta: (delta) => deltas.push(delta) });
    expect(error).toMatchObject({ code: 'provider.invalid_response', retryable: true });
    expect(deltas).toEqual(['Hel']);
  });

  it('a stream that ends with no choice, no content and no finish reason is provider.invalid_response, retryable', async () => {
    await harness.serveStream(wire.stream.empty, 'end');
    const deltas: string[] = [];
    const error = await harness.failure({ onTextDelta: (delta) => deltas.push(delta) });
    expect(error).toMatchObject({ code: 'provider.invalid_response', retryable: true });
    expect(deltas).toEqual([]);
  });

  it('a stream event that is not JSON is provider.invalid_response', async () => {
    const broken = { ...wire.stream.text('Hel'), data: '{"type":' };
    await harness.serveStream([...wire.stream.start, broken, ...wire.stream.end], 'end');
    const error = await harness.failure({ onTextDelta: () => undefined });
    expect(error).toMatchObject({ code: 'provider.invalid_response', retryable: true });
  });

  it('an error thrown by onTextDelta is rethrown as it is, and the stream is closed', async () => {
    await harness.serveStream([...wire.stream.start, wire.stream.text('a'), wire.stream.text('b')], 'open');
    const thrown = new Error('consumer broke');
    const request = contractRequest({
      onTextDelta: () => {
        throw thrown;
      },
    });
    await expect(harness.model().generate(request)).rejects.toBe(thrown);
    expect(await harness.server().requests[0]!.closedEarly).toBe(true);
  });

  // A case a provider switches off is left out, not skipped: a skipped test is not a pass. The provider's README says
  // what it does not check.
  const optionalIt = (enabled: boolean) => (enabled ? it : skippedCase);

  optionalIt(definition.requiresStreamEnd !== false)(
    'a stream that ends cleanly without its end is provider.invalid_response',
    async () => {
      await harness.serveStream([...wire.stream.start, wire.stream.text('Hel')], 'end');
      const error = await harness.failure({ onTextDelta: () => undefined });
      expect(error).toMatchObject({ code: 'provider.invalid_response', retryable: true });
    },
  );

  optionalIt(definition.acceptsUnstreamedAnswer !== false)(
    'a streamed call answered in one piece (a proxy ignoring stream: true) delivers it as one delta',
    async () => {
      await harness.serve((_request, response) => sendJson(response, 200, wire.answer('whole')));
      const deltas: string[] = [];
      const answer = await harness
        .model()
        .generate(contractRequest({ onTextDelta: (delta) => deltas.push(delta) }));
      expect(deltas).toEqual(['whole']);
      expect(answer.content).toBe('whole');
    },
  );

  const capped = definition.maxResponseBytes !== false;
  const maxResponseBytes = 10_000;
  const longBody = JSON.stringify(wire.answer('x'.repeat(20_000)));

  if (capped)
    it.each([
      ['declared larger than the cap', { 'content-length': String(longBody.length) }, longBody.slice(0, 100)],
      ['chunked and past the cap', {}, longBody],
    ])(
      'a 200 body %s is provider.response_too_large, not retryable, read no further',
      async (_label, headers, sent) => {
        await harness.serve((_request, response) => {
          response.writeHead(200, { 'content-type': 'application/json', ...headers });
          // Never ended: a body that would go on for ever.
          response.write(sent);
        });
        const error = await harness.failure({}, { maxResponseBytes });
        expect(error).toMatchObject({ code: 'provider.response_too_large', retryable: false });
        expect(await harness.server().requests[0]!.closedEarly).toBe(true);
      },
    );

  optionalIt(capped)(
    'a stream past the cap is provider.response_too_large, not retryable, and is closed',
    async () => {
      const pieces = Array.from({ length: 20 }, () => wire.stream.text('y'.repeat(1_000)));
      await harness.serveStream([...wire.stream.start, ...pieces], 'open');
      const deltas: string[] = [];
      const error = await harness.failure(
        { onTextDelta: (delta) => deltas.push(delta) },
        { maxResponseBytes },
      );
      expect(error).toMatchObject({ code: 'provider.response_too_large', retryable: false });
      expect(deltas.length).toBeLessThan(20);
      expect(await harness.server().requests[0]!.closedEarly).toBe(true);
    },
  );

  optionalIt(capped)('reads a body under the cap', async () => {
    await harness.serve((_request, response) => sendJson(response, 200, wire.answer('x'.repeat(20_000))));
    const answer = await harness.model({ maxResponseBytes: 30_000 }).generate(contractRequest());
    expect(answer.content).toHaveLength(20_000);
  });
}

/** Registers nothing: the stand-in for `it` when a provider switches a case off. */
function skippedCase(_name: string, _test: () => Promise<void>): void {}
