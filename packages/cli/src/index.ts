// @keel/cli as a library: the entry used by the `keel` binary, and the agent-file loader.
export {
  type AgentFile,
  loadAgentFile,
  type ModelEntry,
  parseAgentFile,
  type ProviderKind,
} from './agent-file.js';
export { main } from './main.js';
