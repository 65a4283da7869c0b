import { startSse, writeSse } from './http-test-server.js';
import { type ContractHarness, contractRequest } from './model-provider-contract-support.js';
import { expect, it, vitestUtilities } from './vitest-functions.js';

// Faked: the stall watch's timer and clock. Sockets, setImmediate and the server stay real.
const FAKED = (): { toFake: ('setTimeout' | 'clearTimeout' | 'Date')[] } => ({
  toFake: ['setTimeout', 'clearTimeout', 'Date'],
});

/**
 * Stall timeouts of a streamed call, on a real server that sends its headers and then nothing, or part of an answer
 * and then nothing: `network.timeout` (retryable) saying what stalled, on vitest's fake timers (no real wait).
 */
export function modelProviderStallContract(harness: ContractHarness): void {
  const { wire } = harness;

  it('a stream whose server sends its headers, then nothing, is network.timeout (first_byte) at streamFirstByteTimeoutMs', async () => {
    await harness.serve((_request, response) => startSse(response));
    const vi = vitestUtilities();
    vi.useFakeTimers(FAKED());
    try {
      const model = harness.model();
      let settled = false;
      const outcome = model
        .generate(
          contractRequest({
            onTextDelta: () => undefined,
            streamFirstByteTimeoutMs: 2_000,
            streamIdleTimeoutMs: 500,
          }),
        )
        .then(
          () => undefined,
          (error: unknown) => error,
        )
        .finally(() => {
          settled = true;
        });
      await vi.advanceTimersByTimeAsync(1_999);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(await outcome).toMatchObject({
        code: 'network.timeout',
        retryable: true,
        provider: model.provider,
        data: { stalled: 'first_byte', timeoutMs: 2_000, received: 0 },
      });
    } finally {
      vi.useRealTimers();
    }
  });

  it('a stream that goes silent mid-answer is network.timeout (idle) at streamIdleTimeoutMs, after what it received', async () => {
    await harness.serve((_request, response) => {
      startSse(response);
      writeSse(response, [...wire.stream.start, wire.stream.text('Hel')]);
    });
    const vi = vitestUtilities();
    vi.useFakeTimers(FAKED());
    try {
      const model = harness.model();
      let delivered: () => void = () => undefined;
      const firstDelta = new Promise<void>((resolve) => {
        delivered = resolve;
      });
      const deltas: string[] = [];
      const outcome = model
        .generate(
          contractRequest({
            onTextDelta: (delta) => {
              deltas.push(delta);
              delivered();
            },
            streamFirstByteTimeoutMs: 60_000,
            streamIdleTimeoutMs: 500,
          }),
        )
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      await firstDelta;
      await vi.advanceTimersByTimeAsync(500);
      const error = await outcome;
      expect(error).toMatchObject({
        code: 'network.timeout',
        retryable: true,
        provider: model.provider,
        data: { stalled: 'idle', timeoutMs: 500 },
      });
      expect((error as { data: { received: number } }).data.received).toBeGreaterThan(0);
      expect(deltas).toEqual(['Hel']);
    } finally {
      vi.useRealTimers();
    }
  });
}
