import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../spec/model.js';
import { MemoryRunStore } from '../../store/memory-run-store.js';
import { FakeClock, flushMicrotasks } from '../../testing/fake-clock.js';
import { type ScriptedResponse, scriptedModel } from '../../testing/scripted-model.js';
import { agent } from '../agent.js';
import { queuedRun } from '../queued-run.js';
import { tool } from '../tools/tool.js';

const START_MS = 1_700_000_000_000;

/** A world for pause tests: a `charge` tool (not idempotent) whose executions wait until a test lets them go. */
class PauseWorld {
  readonly store = new MemoryRunStore();
  readonly effects: string[] = [];
  readonly waiting = new Map<string, () => void>();
  private entered: Array<() => void> = [];
  /** The model's answer by step (0: the first). */
  script: ScriptedResponse[] = [
    { toolCalls: [{ name: 'charge', arguments: { cents: 1 } }] },
    { toolCalls: [{ name: 'charge', arguments: { cents: 2 } }] },
    { content: 'done' },
  ];
  /** Model requests by step. */
  readonly requests: number[] = [];
  /** When set, the model waits at this step until its signal aborts. */
  hangAtStep: number | undefined;

  agent(owner: string, parallel = 1) {
    const charge = tool({
      name: 'charge',
      description: 'Charges a card',
      input: { type: 'object', properties: { cents: { type: 'integer' } }, required: ['cents'] } as const,
      execute: async (_input: { cents: number }, context) => {
        await new Promise<void>((resolve) => {
          this.waiting.set(context.idempotencyKey, resolve);
          for (const notify of this.entered.splice(0)) notify();
        });
        this.effects.push(context.idempotencyKey);
        return 'charged';
      },
    });
    const model = scriptedModel((request: ModelRequest) => {
      const step = request.messages.filter((message) => message.role === 'assistant').length;
      this.requests[step] = (this.requests[step] ?? 0) + 1;
      if (step === this.hangAtStep) {
        return new Promise((_resolve, reject) => {
          request.signal.addEventListener('abort', () => reject(request.signal.reason), { once: true });
        });
      }
      return this.script[step] ?? { content: 'done' };
    });
    return agent({
      name: 'pause-world',
      model,
      tools: [charge],
      clock: new FakeClock(START_MS),
      limits: { maxParallelToolCalls: parallel },
      retry: { maxAttempts: 1, toolMaxAttempts: 1 },
      store: this.store,
      durability: { owner, storeMaxAttempts: 1 },
    });
  }

  /** Resolves once `count` calls wait in `charge`. */
  async callsWaiting(count: number): Promise<void> {
    while (this.waiting.size < count) await new Promise<void>((resolve) => this.entered.push(resolve));
  }

  release(key: string): void {
    const resolve = this.waiting.get(key);
    this.waiting.delete(key);
    resolve?.();
  }

  async queue(runId: string): Promise<void> {
    await this.store.createRun(queuedRun({ runId, agentName: 'pause-world', input: 'pay', nowMs: START_MS }));
  }
}

describe('pausing a run (resume pauseSignal)', () => {
  it('lets a running call finish and be saved, starts nothing more, frees the lease; another process goes on', async () => {
    const world = new PauseWorld();
    await world.queue('p1');
    const pause = new AbortController();
    const running = world.agent('worker-a').resume('p1', { pauseSignal: pause.signal });
    await world.callsWaiting(1);
    pause.abort();
    await flushMicrotasks();
    // The call is still running: the run waits for it.
    expect(world.waiting.has('p1:1:0')).toBe(true);
    world.release('p1:1:0');
    const paused = await running;
    expect(paused).toMatchObject({ status: 'interrupted', stopReason: 'paused', resumable: true });
    expect(paused.error?.code).toBe('run.interrupted');
    expect(world.effects).toEqual(['p1:1:0']);
    const stored = await world.store.loadRun('p1');
    expect(stored).toMatchObject({ status: 'running' });
    expect(stored?.lease).toBeUndefined();
    expect((await world.store.ledger('p1')).map((entry) => [entry.idempotencyKey, entry.status])).toEqual([
      ['p1:1:0', 'completed'],
    ]);

    const resumed = world.agent('worker-b').resume('p1');
    await world.callsWaiting(1);
    world.release('p1:2:0');
    expect(await resumed).toMatchObject({ status: 'completed', output: 'done' });
    expect(world.effects).toEqual(['p1:1:0', 'p1:2:0']);
    // Step 1's saved response was not asked for again.
    expect(world.requests).toEqual([1, 1, 1]);
  });

  it('abandons a model call in flight: the step is asked again on resume, nothing runs twice', async () => {
    const world = new PauseWorld();
    await world.queue('p2');
    world.hangAtStep = 1;
    const pause = new AbortController();
    const running = world.agent('worker-a').resume('p2', { pauseSignal: pause.signal });
    await world.callsWaiting(1);
    world.release('p2:1:0');
    while (world.requests[1] === undefined) await flushMicrotasks();
    pause.abort();
    expect(await running).toMatchObject({ status: 'interrupted', stopReason: 'paused' });
    world.hangAtStep = undefined;
    const resumed = world.agent('worker-b').resume('p2');
    await world.callsWaiting(1);
    world.release('p2:2:0');
    expect(await resumed).toMatchObject({ status: 'completed' });
    expect(world.effects).toEqual(['p2:1:0', 'p2:2:0']);
    expect(world.requests).toEqual([1, 2, 1]);
  });

  it('with parallel calls, lets calls start only beside running ones, and pauses once none runs', async () => {
    const world = new PauseWorld();
    world.script = [
      {
        toolCalls: [
          { name: 'charge', arguments: { cents: 1 } },
          { name: 'charge', arguments: { cents: 2 } },
          { name: 'charge', arguments: { cents: 3 } },
          { name: 'charge', arguments: { cents: 4 } },
        ],
      },
      { content: 'done' },
    ];
    await world.queue('p3');
    const pause = new AbortController();
    const running = world.agent('worker-a', 2).resume('p3', { pauseSignal: pause.signal });
    await world.callsWaiting(2);
    pause.abort();
    // Call 2 starts in the slot call 0 frees, beside call 1, which still runs.
    world.release('p3:1:0');
    await world.callsWaiting(2);
    world.release('p3:1:1');
    world.release('p3:1:2');
    expect(await running).toMatchObject({ status: 'interrupted', stopReason: 'paused' });
    // Once no call ran, call 3 did not start.
    expect(world.effects).toEqual(['p3:1:0', 'p3:1:1', 'p3:1:2']);
    expect((await world.store.ledger('p3')).map((entry) => entry.status)).toEqual([
      'completed',
      'completed',
      'completed',
    ]);

    const resumed = world.agent('worker-b', 2).resume('p3');
    await world.callsWaiting(1);
    world.release('p3:1:3');
    expect(await resumed).toMatchObject({ status: 'completed', output: 'done' });
    expect(world.effects).toEqual(['p3:1:0', 'p3:1:1', 'p3:1:2', 'p3:1:3']);
    expect(world.requests).toEqual([1, 1]);
  });

  it('runs nothing when the pause came before the resume', async () => {
    const world = new PauseWorld();
    await world.queue('p4');
    const paused = await world.agent('worker-a').resume('p4', { pauseSignal: AbortSignal.abort() });
    expect(paused).toMatchObject({ status: 'interrupted', stopReason: 'paused', resumable: true });
    expect(world.requests).toEqual([]);
    expect((await world.store.loadRun('p4'))?.lease).toBeUndefined();
  });

  it('refuses a pauseSignal that is not an AbortSignal', async () => {
    const world = new PauseWorld();
    await world.queue('p5');
    await expect(
      world.agent('worker-a').resume('p5', { pauseSignal: 'now' as unknown as AbortSignal }),
    ).rejects.toMatchObject({ code: 'config.invalid', message: expect.stringContaining('pauseSignal') });
  });
});
