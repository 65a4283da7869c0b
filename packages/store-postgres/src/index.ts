export { PostgresRunStore, type PostgresRunStoreOptions } from './postgres-run-store.js';
