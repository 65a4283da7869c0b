// The public surface of @keel/simulated. Every name is exported explicitly: adding one here makes it public API.

export type { Brain, BrainReply, BrainRequest, BrainToolCall } from './brain.js';
export { defaultBrain, MAX_CORRECTIONS, relevantTools } from './default-brain.js';
export {
  FAULT_KINDS,
  type FaultKind,
  type FaultSchedule,
  isFaultKind,
  planFaults,
  scheduledFault,
  validateFaultSchedule,
} from './faults.js';
export { type OutageWindow, outageAt, validateOutages } from './outages.js';
export {
  FAULT_PRESETS,
  type FaultPresetName,
  faultsForModel,
  parseFaults,
  SIMULATED_FALLBACK_MODEL,
  SIMULATED_MODEL,
  type SimulatedFaults,
} from './parse-faults.js';
export { mulberry32, randomAt } from './prng.js';
export { type SimulatedOptions, type SimulatedProvider, simulated } from './provider.js';
export { argumentsFromSchema, type SchemaValueContext, valueFromSchema } from './schema-values.js';
export { type SimulatedRequestRecord, type SimulatedServer, startSimulatedServer } from './server.js';
export type { SimulatedModelOptions, SimulatedServerOptions } from './server-options.js';
