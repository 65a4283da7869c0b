import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../spec/run-events.js';
import { MemoryRunStore } from '../../store/memory-run-store.js';
import { FakeClock } from '../../testing/fake-clock.js';
import { FaultyRunStore } from '../../testing/faulty-run-store.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { agent } from '../agent.js';
import { tool } from '../tools/tool.js';

const lookup = tool({
  name: 'lookup',
  description: 'Looks a city up',
  input: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  idempotent: true,
  execute: ({ city }: { city: string }) => `${city}: sunny`,
});

const ofType = <T extends RunEvent['type']>(events: RunEvent[], type: T) =>
  events.filter((event): event is Extract<RunEvent, { type: T }> => event.type === type);

describe('run events for telemetry', () => {
  it('carry what was sent and answered, and the model and tool call ids', async () => {
    const model = scriptedModel([
      { toolCalls: [{ id: 'call_7', name: 'lookup', arguments: { city: 'Oslo' } }], model: 'scripted-2025' },
      { content: 'Sunny in Oslo.' },
    ]);
    const events: RunEvent[] = [];
    const result = await agent({ model, tools: [lookup], clock: new FakeClock() }).run('Oslo?', {
      onEvent: (event) => events.push(event),
    });
    expect(result.status).toBe('completed');
    const [firstCall] = ofType(events, 'model-call-start');
    expect(firstCall!.messages).toBe(result.messages);
    const [answer, final] = ofType(events, 'model-call-end');
    expect(answer).toMatchObject({
      outcome: 'success',
      responseModel: 'scripted-2025',
      content: '',
      toolCalls: [{ id: 'call_7', name: 'lookup', arguments: '{"city":"Oslo"}' }],
    });
    expect(final).toMatchObject({ responseModel: 'scripted', content: 'Sunny in Oslo.', toolCalls: [] });
    expect(ofType(events, 'tool-call-start')[0]).toMatchObject({
      toolCallId: 'call_7',
      arguments: '{"city":"Oslo"}',
    });
    expect(ofType(events, 'tool-call-end')[0]).toMatchObject({
      toolCallId: 'call_7',
      result: { status: 'success', content: 'Oslo: sunny' },
    });
  });

  it('keep what listeners annotate a run with across a resume, and leave the state alone otherwise', async () => {
    const store = new MemoryRunStore();
    const booking = tool({
      name: 'book',
      description: 'Books a room',
      input: { type: 'object', properties: {} },
      needsApproval: true,
      execute: () => 'booked',
    });
    const model = scriptedModel([{ toolCalls: [{ name: 'book', arguments: {} }] }, { content: 'Booked.' }]);
    const assistant = agent({ model, tools: [booking], store, clock: new FakeClock() });
    const seen: Record<string, string>[] = [];
    assistant.onEvent((event) => {
      if (event.type !== 'run-start' && event.type !== 'run-resumed') return;
      seen.push({ ...event.annotations });
      event.annotations[`attempt-${seen.length}`] = `span-${seen.length}`;
    });
    const first = await assistant.run('Book it', { runId: 'annotated' });
    expect(first.status).toBe('interrupted');
    expect((await store.loadRun('annotated'))?.state).toMatchObject({
      annotations: { 'attempt-1': 'span-1' },
    });
    const key = first.pending![0]!.idempotencyKey;
    const resumed = await assistant.resume('annotated', { approvals: { [key]: { approved: true } } });
    expect(resumed.status).toBe('completed');
    expect(seen).toEqual([{}, { 'attempt-1': 'span-1' }]);
    expect(resumed.state.annotations).toEqual({ 'attempt-1': 'span-1', 'attempt-2': 'span-2' });

    const quiet = await agent({ model: scriptedModel([{ content: 'hi' }]), clock: new FakeClock() }).run(
      'hi',
      {
        onEvent: () => undefined,
      },
    );
    expect('annotations' in quiet.state).toBe(false);
  });

  it('report each checkpoint a durable run saves, and the one it could not', async () => {
    const clock = new FakeClock();
    const store = new FaultyRunStore(new MemoryRunStore());
    const model = scriptedModel([
      { toolCalls: [{ name: 'lookup', arguments: { city: 'Oslo' } }] },
      { content: 'Sunny in Oslo.' },
    ]);
    const events: RunEvent[] = [];
    const assistant = agent({ model, tools: [lookup], store, clock, durability: { storeMaxAttempts: 1 } });
    assistant.onEvent((event) => events.push(event));
    const completed = await assistant.run('Oslo?');
    expect(completed.status).toBe('completed');
    // One event per transition saved, in order, even when one write saves two (a model response goes with the call
    // it starts or the run's end, a step's last completed call with the step's end).
    expect(ofType(events, 'checkpoint-saved').map((event) => [event.transition, event.step])).toEqual([
      ['model-response-received', 1],
      ['tool-call-started', 1],
      ['tool-call-completed', 1],
      ['step-ended', 1],
      ['model-response-received', 2],
      ['run-ended', 2],
    ]);
    expect(ofType(events, 'checkpoint-saved').every((event) => event.durationMs === 0)).toBe(true);

    // The store goes down while the model answers: the write of that answer (with the run's end) fails.
    events.length = 0;
    const outage = agent({
      model: scriptedModel([
        () => {
          store.down = true;
          return { content: 'Sunny.' };
        },
      ]),
      store,
      clock,
      durability: { storeMaxAttempts: 1 },
    });
    outage.onEvent((event) => events.push(event));
    const halted = await outage.run('Oslo?');
    expect(halted).toMatchObject({ status: 'interrupted', stopReason: 'store_unavailable' });
    expect(ofType(events, 'checkpoint-saved')).toEqual([]);
    expect(
      ofType(events, 'checkpoint-failed').map((event) => [event.transition, event.step, event.errorCode]),
    ).toEqual([
      ['model-response-received', 1, 'store.unavailable'],
      ['run-ended', 1, 'store.unavailable'],
    ]);
  });
});
