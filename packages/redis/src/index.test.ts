// The public surface of @keel/redis: what a user can construct is reached through `redisState(...)`.
import { expect, it } from 'vitest';
import * as redis from './index.js';

it('exports the pace store as a type only: `paceStore()` of a state is the way in', () => {
  expect(Object.keys(redis).sort()).toEqual(['RedisBudgetStore', 'redisState']);
});
