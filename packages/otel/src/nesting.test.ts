import { agent, agentTool, MemoryRunStore, type RunEvent } from '@keel/core';
import { FakeClock, scriptedModel } from '@keel/core/testing';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { inMemorySdk, spanNamed } from './test-sdk.js';
import { keelTracing } from './tracing.js';

const START_MS = 1_700_000_000_000;

const parentOf = (spans: readonly ReadableSpan[], span: ReadableSpan): ReadableSpan | undefined =>
  spans.find((candidate) => candidate.spanContext().spanId === span.parentSpanContext?.spanId);

describe('keelTracing of agents made of agents', () => {
  const sdk = inMemorySdk();
  afterEach(() => sdk.spans.reset());
  afterAll(() => sdk.shutdown());

  it("puts a child run's invoke_agent span inside the parent's execute_tool span of the call, in one trace", async () => {
    const clock = new FakeClock(START_MS);
    const store = new MemoryRunStore();
    const research = agent({
      name: 'research',
      model: scriptedModel([{ content: 'Paris' }]),
      clock,
      store,
    });
    const triage = agent({
      name: 'triage',
      model: scriptedModel([
        { toolCalls: [{ name: 'research', arguments: { prompt: 'capital of France?' } }] },
        { content: 'It is Paris.' },
      ]),
      clock,
      store,
      tools: [agentTool(research, { name: 'research', description: 'Looks facts up' })],
    });
    // No context manager: the link goes through the child's run events, not the active context.
    const tracing = keelTracing({ tracer: sdk.tracerProvider.getTracer('test') });
    tracing.observe(triage);
    tracing.observe(research);

    const result = await clock.runUntilSettled(triage.run('capital?', { runId: 'p1' }));
    expect(result.status).toBe('completed');

    const spans = sdk.spans.getFinishedSpans();
    const parentRun = spanNamed(spans, 'invoke_agent triage');
    const call = spanNamed(spans, 'execute_tool research');
    const childRun = spanNamed(spans, 'invoke_agent research');
    const childChat = spans.find(
      (span) => span.name.startsWith('chat ') && parentOf(spans, span) === childRun,
    );
    expect(parentOf(spans, call)).toBe(parentRun);
    expect(parentOf(spans, childRun)).toBe(call);
    expect(childChat).toBeDefined();
    const traceIds = new Set(
      [parentRun, call, childRun, childChat!].map((span) => span.spanContext().traceId),
    );
    expect(traceIds.size).toBe(1);
    expect(childRun.attributes['keel.run.id']).toBe('p1:1:0/research');
  });

  it('emits a handoff run event, a keel.handoff span event, and nests the target run under the handoff call', async () => {
    const clock = new FakeClock(START_MS);
    const store = new MemoryRunStore();
    const support = agent({
      name: 'support',
      model: scriptedModel([{ content: 'Your order has shipped.' }]),
      clock,
      store,
    });
    const triage = agent({
      name: 'triage',
      model: scriptedModel([{ toolCalls: [{ name: 'transfer_to_support', arguments: {} }] }]),
      clock,
      store,
      handoffs: [support],
    });
    const tracing = keelTracing({ tracer: sdk.tracerProvider.getTracer('test') });
    tracing.observe(triage);
    tracing.observe(support);
    const events: RunEvent[] = [];
    triage.onEvent((event) => events.push(event));

    const result = await clock.runUntilSettled(triage.run('Where is my order?', { runId: 'h1' }));
    expect(result.output).toBe('Your order has shipped.');
    expect(events.filter((event) => event.type === 'handoff')).toEqual([
      { type: 'handoff', runId: 'h1', atMs: START_MS, step: 1, from: 'triage', to: 'support' },
    ]);
    // A durable run's journal (the timeline) keeps it too.
    expect(result.state.journal?.entries).toContainEqual({
      type: 'handoff',
      atMs: START_MS,
      step: 1,
      from: 'triage',
      to: 'support',
    });

    const spans = sdk.spans.getFinishedSpans();
    const parentRun = spanNamed(spans, 'invoke_agent triage');
    const call = spanNamed(spans, 'execute_tool transfer_to_support');
    const target = spanNamed(spans, 'invoke_agent support');
    expect(parentOf(spans, target)).toBe(call);
    const handoffEvent = parentRun.events.find((event) => event.name === 'keel.handoff');
    expect(handoffEvent?.attributes).toEqual({
      'keel.handoff.from': 'triage',
      'keel.handoff.to': 'support',
      'keel.run.step': 1,
    });
  });
});
