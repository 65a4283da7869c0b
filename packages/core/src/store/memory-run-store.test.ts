import { runStoreContract } from '../testing/run-store-contract.js';
import { MemoryRunStore } from './memory-run-store.js';

runStoreContract('MemoryRunStore', () => new MemoryRunStore());
