import type { ServerResponse } from 'node:http';
import { agent } from '../agent/agent.js';
import { tool } from '../agent/tools/tool.js';
import { constant } from '../policies/delays.js';
import type { ModelProvider } from '../spec/model.js';
import type { RunEvent } from '../spec/run-events.js';
import {
  type HttpTestServer,
  type ServerSentEvent,
  startHttpTestServer,
  startSse,
} from './http-test-server.js';
import type { ModelProviderWire } from './model-provider-wire.js';
import { afterAll, beforeAll, describe, expect, it } from './vitest-functions.js';

/** A provider under {@link streamRecoveryContract}. */
export interface StreamRecoveryContractDefinition {
  /** The name in the suite's title. */
  name: string;
  /** How the provider's wire writes streamed answers. */
  wire: ModelProviderWire;
  /** Makes the provider under test, sending to `serverUrl` (no trailing slash). */
  create(serverUrl: string): ModelProvider;
  /**
   * Every how many bytes a cut is tried, besides every boundary between two events. Defaults to 9 (about 250 cuts
   * in all, inside text, inside the tool call's arguments, inside event names and JSON); 1 tries every byte.
   */
  strideBytes?: number;
}

const FIRST_TEXT = ['Let me ', 'look that ', 'up for you.'];
const CALL = { id: 'call_1', name: 'get_weather', arguments: ['{"ci', 'ty": "Pa', 'ris"}'] };
const FINAL_TEXT = ['Paris is ', 'sunny, ', '21 degrees ', 'today.'];
const FINAL_OUTPUT = FINAL_TEXT.join('');

/** The SSE body of `events`, as `writeSse` writes it. */
function bodyOf(events: readonly ServerSentEvent[]): string {
  return events
    .map((event) => {
      const data = typeof event.data === 'string' ? event.data : JSON.stringify(event.data);
      return `${event.event === undefined ? '' : `event: ${event.event}\n`}data: ${data}\n\n`;
    })
    .join('');
}

/** What the caller received, by step: deltas appended, a `restarted` recovery voiding the step's text so far. */
type CallerLog = { step: number; delta: string } | { step: number; restart: true };

/** The caller's text of one step (restarts applied). */
function visibleText(log: readonly CallerLog[], step: number): string {
  let text = '';
  for (const entry of log) {
    if (entry.step !== step) continue;
    text = 'restart' in entry ? '' : text + entry.delta;
  }
  return text;
}

/**
 * Recovery of a stream broken mid-answer, against a real HTTP server on 127.0.0.1 speaking the provider's wire: the
 * first answer of a step (text, then a tool call) or of the next step (text) is cut after N bytes, for every N; the
 * run completes, the text the caller received (restarts applied) equals the output exactly, the tool runs once, and
 * the report counts one recovery whenever text had reached the caller before the cut. Also: an answer that departs
 * from the delivered text restarts it, and `streamRecovery: false` fails at once.
 */
export function streamRecoveryContract(definition: StreamRecoveryContractDefinition): void {
  const { wire } = definition;
  const stride = definition.strideBytes ?? 9;
  const answers = {
    tool: bodyOf(wire.stream.toolAnswer(FIRST_TEXT, CALL)),
    final: bodyOf([
      ...wire.stream.start,
      ...FINAL_TEXT.map((piece) => wire.stream.text(piece)),
      ...wire.stream.end,
    ]),
    other: bodyOf([
      ...wire.stream.start,
      wire.stream.text('Sunny: '),
      wire.stream.text(FINAL_OUTPUT),
      ...wire.stream.end,
    ]),
  };

  describe(`stream recovery contract: ${definition.name}`, () => {
    let server: HttpTestServer;
    // What the next requests get: the step's answer, cut after `cutAt` bytes on its first request.
    let plan: { cutStep: 'tool' | 'final'; cutAt: number; retryAnswer?: string } = {
      cutStep: 'tool',
      cutAt: 0,
    };
    let requests: { step: 'tool' | 'final'; deltasSoFar: number }[] = [];
    let deltaCount = 0;

    beforeAll(async () => {
      server = await startHttpTestServer((request, response: ServerResponse) => {
        const body = request.body;
        const step = body.includes('Sunny in Paris') ? 'final' : 'tool';
        const first = !requests.some((entry) => entry.step === step);
        requests.push({ step, deltasSoFar: deltaCount });
        startSse(response);
        const answer = answers[step];
        if (step === plan.cutStep && first) {
          response.write(answer.slice(0, plan.cutAt), () => response.destroy());
          return;
        }
        response.end(step === plan.cutStep && plan.retryAnswer !== undefined ? plan.retryAnswer : answer);
      });
    }, 30_000);
    afterAll(() => server.close());

    async function runCut(options: { streamRecovery?: boolean } = {}) {
      requests = [];
      deltaCount = 0;
      let executions = 0;
      const weather = tool({
        name: 'get_weather',
        description: 'Current weather for a city',
        input: {
          type: 'object',
          properties: { city: { type: 'string' } },
          required: ['city'],
        },
        execute: async (input: { city: string }) => {
          executions++;
          return `Sunny in ${input.city}, 21 degrees`;
        },
      });
      const log: CallerLog[] = [];
      const recoveries: Extract<RunEvent, { type: 'stream-recovered' }>[] = [];
      const assistant = agent({
        model: definition.create(server.url),
        tools: [weather],
        retry: { delay: constant(0) },
        ...options,
      });
      const result = await assistant.run('Weather in Paris?', {
        onTextDelta: () => {
          deltaCount++;
        },
        onEvent: (event) => {
          if (event.type === 'text-delta') log.push({ step: event.step, delta: event.delta });
          if (event.type !== 'stream-recovered') return;
          recoveries.push(event);
          if (event.mode === 'restarted') log.push({ step: event.step, restart: true });
        },
      });
      return { result, executions, log, recoveries };
    }

    for (const step of ['tool', 'final'] as const) {
      it(`recovers the ${step === 'tool' ? 'first answer (text, then a tool call)' : 'final answer'} cut after many byte offsets (inside text, a tool call's arguments, between events)`, async () => {
        const length = answers[step].length;
        let recovered = 0;
        for (const cutAt of cutPoints(answers[step], stride)) {
          plan = { cutStep: step, cutAt };
          const { result, executions, log, recoveries } = await runCut();
          const where = `cut after ${cutAt} of ${length} bytes`;
          expect(result.status, `${where}: ${result.error?.message}`).toBe('completed');
          expect(result.output, where).toBe(FINAL_OUTPUT);
          expect(executions, where).toBe(1);
          const steps = [...new Set(log.map((entry) => entry.step))];
          expect(
            steps.map((index) => visibleText(log, index)),
            where,
          ).toEqual([FIRST_TEXT.join(''), FINAL_OUTPUT]);
          const cutRequest = requests.filter((entry) => entry.step === step);
          const deltasBeforeRetry =
            cutRequest.length > 1
              ? cutRequest[1]!.deltasSoFar - (step === 'final' ? firstStepDeltas(requests) : 0)
              : 0;
          const expected = deltasBeforeRetry > 0 ? 1 : 0;
          expect(recoveries.length, where).toBe(expected);
          expect(result.report.streamRecoveries?.total ?? 0, where).toBe(expected);
          for (const recovery of recoveries) expect(recovery.mode, where).toBe('continued');
          recovered += expected;
        }
        expect(recovered).toBeGreaterThan(0);
      }, 120_000);
    }

    it('restarts the text when the new answer departs from what was delivered', async () => {
      const cutAt = answers.final.indexOf('sunny');
      plan = { cutStep: 'final', cutAt, retryAnswer: answers.other };
      const { result, log, recoveries } = await runCut();
      expect(result.status).toBe('completed');
      expect(recoveries).toMatchObject([{ mode: 'restarted', keptCharacters: 0 }]);
      expect(result.report.streamRecoveries).toEqual({ total: 1, continued: 0, restarted: 1 });
      expect(visibleText(log, recoveries[0]!.step)).toBe(result.output);
      expect(result.output).toBe(`Sunny: ${FINAL_OUTPUT}`);
    }, 30_000);

    it('with streamRecovery: false, fails at once with what was streamed', async () => {
      const cutAt = answers.final.indexOf('sunny');
      plan = { cutStep: 'final', cutAt };
      const { result, recoveries } = await runCut({ streamRecovery: false });
      expect(result.status).toBe('failed');
      expect(result.error?.data.partialOutput).toBe('Paris is ');
      expect(result.error?.message).toContain('not retried');
      expect(recoveries).toEqual([]);
    }, 30_000);
  });
}

/** Every `stride`-th byte offset of `body`, and every offset right after an event (between two events). */
function cutPoints(body: string, stride: number): number[] {
  const points = new Set<number>();
  for (let offset = 1; offset < body.length; offset += stride) points.add(offset);
  for (let end = body.indexOf('\n\n'); end !== -1; end = body.indexOf('\n\n', end + 1)) {
    if (end + 2 < body.length) points.add(end + 2);
  }
  return [...points].sort((left, right) => left - right);
}

/** Deltas the caller had received when the final step's first request arrived (all of them the first step's). */
function firstStepDeltas(requests: readonly { step: string; deltasSoFar: number }[]): number {
  return requests.find((entry) => entry.step === 'final')?.deltasSoFar ?? 0;
}
