// Test helpers for keel and for users' own tests. Explicit exports only.
export { FakeClock, flushMicrotasks } from './fake-clock.js';
