export { SqliteRunStore } from './sqlite-run-store.js';
export type { SqliteRunStoreOptions } from './sqlite-options.js';
