export type { PostgresRunStoreOptions } from './postgres-options.js';
export { PostgresRunStore } from './postgres-run-store.js';
