// The policy state `keel worker` shares: two agents built from agent files as two workers build them, each with its
// own connections to the test Redis (as two processes would have), in a namespace of their own.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CircuitBreaker } from '@keel/core';
import { SqliteRunStore } from '@keel/store-sqlite';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { type BuiltAgent, buildAgent } from './build-agent.js';
import { type FleetPolicies, fleetPolicies } from './fleet-policies.js';

const redisUrl = process.env.KEEL_TEST_REDIS_URL;
if (redisUrl === undefined)
  throw new Error('KEEL_TEST_REDIS_URL is not set: the vitest global setup starts Redis');
const directory = mkdtempSync(join(tmpdir(), 'keel-fleet-policies-'));
const namespace = `policies-${process.pid}-${Date.now().toString(36)}`;
const opened: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const entry of opened.reverse()) await entry.close();
  rmSync(directory, { recursive: true, force: true });
});

async function worker(agentName: string): Promise<{ built: BuiltAgent; policies: FleetPolicies }> {
  const file = join(directory, `${agentName}.yaml`);
  writeFileSync(file, `name: ${agentName}\ntools: [get_weather]\n`);
  const store = new SqliteRunStore(join(directory, `${agentName}-${opened.length}.db`));
  const policies = fleetPolicies({ url: redisUrl!, namespace });
  await policies.state.ready();
  const built = await buildAgent({
    agentFile: file,
    workingDirectory: directory,
    environment: {},
    store,
    policies: (name) => policies.forAgent(name),
  });
  opened.push(store, policies, built);
  return { built, policies };
}

function breakerOf(built: BuiltAgent, tool: boolean): CircuitBreaker {
  const entry = [...built.agent.breakers].find(([name]) => name.startsWith('tool:') === tool);
  if (entry === undefined) throw new Error(`no ${tool ? 'tool' : 'model'} breaker`);
  return entry[1];
}

async function until(condition: () => boolean): Promise<void> {
  for (let round = 0; round < 500 && !condition(); round++) await new Promise((done) => setTimeout(done, 10));
}

describe('keel worker: breakers and retry budget shared through Redis', () => {
  it("shares a model's breaker with every agent of the fleet, a tool's only with the same agent", async () => {
    const first = await worker('desk');
    const second = await worker('desk');
    const other = await worker('helpdesk');

    const isolation = await breakerOf(first.built, false).isolate();
    await until(() => breakerOf(second.built, false).state === 'isolated');
    await until(() => breakerOf(other.built, false).state === 'isolated');
    expect(breakerOf(second.built, false).state).toBe('isolated');
    expect(breakerOf(other.built, false).state).toBe('isolated');
    await isolation.dispose();
    await until(() => breakerOf(other.built, false).state === 'closed');
    expect(breakerOf(other.built, false).state).toBe('closed');

    const toolIsolation = await breakerOf(first.built, true).isolate();
    await until(() => breakerOf(second.built, true).state === 'isolated');
    expect(breakerOf(second.built, true).state).toBe('isolated');
    // Another agent's tool of the same name is another dependency: its breaker is its own.
    expect(breakerOf(other.built, true).state).toBe('closed');
    await toolIsolation.dispose();

    const keys = new Redis(redisUrl!);
    try {
      const names = (await keys.keys(`keel:${namespace}:breaker:*`)).sort();
      // One state per model for the whole fleet, one per agent's tool.
      expect(names).toEqual([
        `keel:${namespace}:breaker:agent.desk.tool:get_weather`,
        `keel:${namespace}:breaker:agent.helpdesk.tool:get_weather`,
        `keel:${namespace}:breaker:simulated/sim-fallback`,
        `keel:${namespace}:breaker:simulated/sim-primary`,
      ]);
    } finally {
      keys.disconnect();
    }
  });

  it('runs a task with the shared state, and the fleet retry budget counts its requests', async () => {
    const { built } = await worker('runner');
    const result = await built.agent.run('What is the weather in Oslo?');
    expect(result.status).toBe('completed');
    const keys = new Redis(redisUrl!);
    try {
      expect(await keys.exists(`keel:${namespace}:retry-budget:fleet`)).toBe(1);
    } finally {
      keys.disconnect();
    }
  });
});
