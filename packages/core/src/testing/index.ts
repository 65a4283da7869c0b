// Test helpers for keel and for users' own tests. Explicit exports only.
export { FakeClock, flushMicrotasks } from './fake-clock.js';
export { FaultyRunStore } from './faulty-run-store.js';
export {
  closedPort,
  type HttpTestServer,
  type RecordedRequest,
  type ServerSentEvent,
  sendJson,
  startHttpTestServer,
  startSse,
  type TestRequestHandler,
  writeSse,
} from './http-test-server.js';
export { modelProviderContract } from './model-provider-contract.js';
export type {
  ModelProviderContractDefinition,
  ModelProviderContractSettings,
} from './model-provider-contract-support.js';
export {
  anthropicMessagesWire,
  type ModelProviderWire,
  openaiChatWire,
  type WireErrorKind,
} from './model-provider-wire.js';
export { paceStoreContract } from './pace-store-contract.js';
export { runStoreContract } from './run-store-contract.js';
export {
  type ScriptedModel,
  type ScriptedModelOptions,
  type ScriptedResponse,
  type ScriptedStep,
  type ScriptedStepFunction,
  type ScriptedToolCall,
  scriptedModel,
} from './scripted-model.js';
export { SESSION_START_MS, SessionFixture } from './session-fixture.js';
export {
  type StreamRecoveryContractDefinition,
  streamRecoveryContract,
} from './stream-recovery-contract.js';
