export type { SqliteRunStoreOptions } from './sqlite-options.js';
export { SqliteRunStore } from './sqlite-run-store.js';
