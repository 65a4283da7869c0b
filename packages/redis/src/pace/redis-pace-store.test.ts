// The pace store in Redis: the store contract (two states standing for two processes over one window), one round trip
// per operation, and agents of two processes pacing against one provider window.
import { paceStoreContract } from '@keel/core/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type RedisState, redisState } from '../redis-state.js';
import { type CommandMonitor, monitorCommands } from '../test-support/command-monitor.js';
import {
  TEST_OPERATION_TIMEOUT_MS,
  testClient,
  testRedisUrl,
  uniqueNamespace,
} from '../test-support/test-redis.js';

const open: RedisState[] = [];
const monitors: CommandMonitor[] = [];
afterAll(async () => {
  await Promise.all(open.splice(0).map((state) => state.close()));
});
afterEach(async () => {
  await Promise.all(monitors.splice(0).map((monitor) => monitor.close()));
});

async function connect(namespace: string): Promise<RedisState> {
  const state = redisState({ url: testRedisUrl(), namespace, operationTimeoutMs: TEST_OPERATION_TIMEOUT_MS });
  open.push(state);
  await state.ready();
  return state;
}

paceStoreContract('RedisPaceStore (two processes)', async () => {
  const namespace = uniqueNamespace('pace');
  const [one, two] = await Promise.all([connect(namespace), connect(namespace)]);
  return [one.paceStore(), two.paceStore()];
});

describe('RedisPaceStore', () => {
  it('admits, observes and takes a refusal with one round trip each, and keeps no API key', async () => {
    const namespace = uniqueNamespace('pace-trips');
    const store = (await connect(namespace)).paceStore();
    const monitor = await monitorCommands(namespace);
    monitors.push(monitor);
    const key = 'openai/gpt-4.1-mini/prod-key';
    const request = { key, callId: 'run-1:1', tokens: 1_200, nowMs: 0, tenant: 'acme', priority: 0 };
    for (let call = 0; call < 5; call++) {
      expect(await store.admit({ ...request, nowMs: call * 1_000 })).toBe(0);
      await store.observe(key, { requestsRemaining: 100, requestsResetInMs: 60_000 }, call * 1_000);
    }
    await store.refused(key, 1_000, 5_000);
    const commands = await monitor.settle();
    // One script call per operation: EVAL the first time on a connection (ioredis sends the script once), EVALSHA after.
    expect(commands.map((command) => command.split(' ')[0])).toEqual(['eval', ...Array(10).fill('evalsha')]);
    const client = testClient();
    try {
      const keys = (await client.keys(`keel:${namespace}:pace:*`)).sort();
      expect(keys).toEqual([`keel:${namespace}:pace:${key}`, `keel:${namespace}:pace:${key}:served`]);
    } finally {
      client.disconnect();
    }
  });
});
