import { describe, expect, it } from 'vitest';
import { KeelError } from '../../errors/keel-error.js';
import type { NewRun, RunRecord, StepCommit } from '../../spec/run-store.js';
import { MemoryRunStore } from '../../store/memory-run-store.js';
import { FakeClock } from '../../testing/fake-clock.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { agent } from '../agent.js';
import type { ConversationManager } from '../conversation/manager.js';
import type { RunState } from '../run/run-state.js';
import { tool } from '../tools/tool.js';

/** What each write handed the store: where its messages start, how many, and the state's text. */
interface Written {
  start: number | undefined;
  messages: number;
  stateText: string;
  /** The journal log write's start and entries, when it had one. */
  journal?: { start: number; entries: number; dropped: number };
}

class RecordingStore extends MemoryRunStore {
  readonly writes: Written[] = [];
  /** What each `createRun` handed the store: its log write's start and length, and the state's text. */
  readonly created: Written[] = [];
  override async createRun(run: NewRun): Promise<RunRecord> {
    this.created.push({
      start: run.messages?.start,
      messages: run.messages?.messages.length ?? 0,
      stateText: JSON.stringify(run.state),
    });
    return super.createRun(run);
  }
  override async commitStep(runId: string, commit: StepCommit): Promise<number> {
    const version = await super.commitStep(runId, commit);
    const log = commit.checkpoint.messages;
    const journal = commit.checkpoint.journal;
    this.writes.push({
      start: log?.start,
      messages: log?.messages.length ?? 0,
      stateText: commit.stateText ?? JSON.stringify(commit.checkpoint.state),
      ...(journal === undefined
        ? {}
        : { journal: { start: journal.start, entries: journal.entries.length, dropped: journal.dropped } }),
    });
    return version;
  }
}

const count = tool({
  name: 'count',
  description: 'Counts',
  input: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } as const,
  idempotent: true,
  execute: async ({ n }: { n: number }) => ({ counted: n }),
});

/** `steps` steps of one `count` call each, then `done`; `fail(step)` may throw instead of answering. */
function counter(
  store: RecordingStore,
  steps: number,
  options: { conversationManager?: ConversationManager } = {},
) {
  let overflowed = false;
  return agent({
    name: 'counter',
    model: scriptedModel((request) => {
      const step = request.messages.filter((message) => message.role === 'assistant').length + 1;
      if (step === 4 && options.conversationManager !== undefined && !overflowed) {
        overflowed = true;
        return new KeelError('provider.context_overflow', 'too long');
      }
      return step <= steps
        ? { toolCalls: [{ id: `call_${step}`, name: 'count', arguments: { n: step } }] }
        : { content: 'done' };
    }),
    tools: [count],
    clock: new FakeClock(),
    limits: { maxTurns: steps + 5 },
    store,
    ...options,
  });
}

describe('durable runs on a store with a message log', () => {
  it('write the small state and only the messages added since their last write', async () => {
    const store = new RecordingStore();
    const result = await counter(store, 30).run('count to 30', { runId: 'appends' });
    expect(result.status).toBe('completed');
    // The run's creation logs its input; each write then holds the messages of its step (the idempotent call's start
    // and end wait for the step's end: one write a step, the model's call and the tool's result).
    expect(store.created).toEqual([{ start: 0, messages: 1, stateText: expect.any(String) }]);
    expect(JSON.parse(store.created[0]!.stateText).messages).toBe(1);
    expect(store.writes[0]).toMatchObject({ start: 1, messages: 2 });
    expect(store.writes).toHaveLength(31);
    let end = 1;
    for (const write of store.writes) {
      expect(write.start).toBe(end);
      expect(write.messages).toBeLessThanOrEqual(2);
      end += write.messages;
      expect(JSON.parse(write.stateText).messages).toBe(end);
      expect(write.stateText).not.toContain('counted');
    }
    expect(end).toBe(result.messages.length);
    const stored = await store.loadRun('appends');
    expect((stored!.state as unknown as RunState).messages).toEqual(result.messages);
    expect(stored!.messageCount).toBe(result.messages.length);
  });

  it('write only the journal entries added since their last write', async () => {
    const store = new RecordingStore();
    const result = await counter(store, 20).run('count to 20', { runId: 'journal' });
    expect(result.status).toBe('completed');
    let end = 0;
    for (const write of store.writes) {
      const journal = JSON.parse(write.stateText).journal as { entries: number; dropped: number } | undefined;
      if (write.journal === undefined) {
        expect(journal).toBeUndefined();
        continue;
      }
      // Each write appends where the last one ended; the state holds the entries' count, never an entry.
      expect(write.journal.start).toBe(end);
      expect(write.journal.entries).toBeLessThanOrEqual(2);
      end += write.journal.entries;
      expect(journal).toEqual({ entries: end, dropped: 0 });
      expect(write.stateText).not.toContain('model-call-end');
    }
    const stored = await store.loadRun('journal');
    const journal = (stored!.state as unknown as RunState).journal!;
    expect(journal.entries.length).toBe(end);
    expect(journal.entries.filter((entry) => entry.type === 'model-call-end')).toHaveLength(21);
    expect(stored!.journalEnd).toBe(end);
  });

  it("write a queued run's input once, when a worker starts it", async () => {
    const store = new RecordingStore();
    const { queuedRun } = await import('../queued-run.js');
    await store.createRun(
      queuedRun({ runId: 'queued', agentName: 'counter', input: 'count to 3', nowMs: 0 }),
    );
    const result = await counter(store, 3).resume('queued');
    expect(result.status).toBe('completed');
    // The worker's first checkpoint logs the input; the next write starts after it.
    const logged = await store.loadRun('queued');
    expect(logged!.messageCount).toBe(result.messages.length);
    expect(store.writes[0]).toMatchObject({ start: 1 });
    expect((logged!.state as unknown as RunState).messages).toEqual(result.messages);
  });

  it('rewrite the log from the first message a context reduction changed', async () => {
    const store = new RecordingStore();
    const dropOldest: ConversationManager = {
      name: 'drop-oldest',
      async reduce(messages) {
        // Keeps the first message, drops the next two (the first step's call and its result).
        return { messages: [messages[0]!, ...messages.slice(3)], reduced: true };
      },
    };
    const result = await counter(store, 6, { conversationManager: dropOldest }).run('count to 6', {
      runId: 'rewrite',
    });
    expect(result.status).toBe('completed');
    expect(result.report.contextReductions).toBe(1);
    const rewrite = store.writes.findIndex((write, index) => index > 0 && write.start === 1);
    expect(rewrite).toBeGreaterThan(0);
    // Everything after the kept first message, written once; then appends again.
    const rewritten = store.writes[rewrite]!;
    expect(rewritten.messages).toBe(JSON.parse(rewritten.stateText).messages - 1);
    expect(rewritten.messages).toBeGreaterThanOrEqual(4);
    for (const write of store.writes.slice(rewrite + 1)) expect(write.start).toBeGreaterThanOrEqual(5);
    const stored = await store.loadRun('rewrite');
    expect((stored!.state as unknown as RunState).messages).toEqual(result.messages);
    expect(stored!.messageCount).toBe(result.messages.length);
  });
});
