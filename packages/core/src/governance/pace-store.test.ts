import { paceStoreContract } from '../testing/pace-store-contract.js';
import { memoryPaceStore } from './pace-governor.js';

paceStoreContract('memoryPaceStore', () => {
  const store = memoryPaceStore();
  return [store, store];
});
