// The public surface of @keel/redis. Every name is exported explicitly: adding one here makes it public API.
export type { RedisBreakerStoreOptions } from './breaker/redis-breaker-store.js';
export { RedisBudgetStore } from './budget/redis-budget-store.js';
export type { RedisPaceStore } from './pace/redis-pace-store.js';
export type { RedisRateLimiterStoreOptions } from './rate-limiter/redis-rate-limiter-store.js';
export type { RedisRecoveredEvent, RedisStatus, RedisUnavailableEvent } from './redis-events.js';
export { type RedisState, redisState } from './redis-state.js';
export type { RedisStateOptions } from './redis-state-options.js';
export type { RedisRetryBudgetStoreOptions } from './retry-budget/redis-retry-budget-store.js';
export type { UnavailableRule } from './shared-connection.js';
