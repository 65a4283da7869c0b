// @keel/cli as a library: the entry used by the `keel` binary, the agent-file loader, its built-in tools, and an
// agent file as a chaos subject (what the peer comparison drives).
export {
  type AgentFile,
  loadAgentFile,
  type ModelEntry,
  parseAgentFile,
  type ProviderKind,
} from './agent-file.js';
export { BUILTIN_TOOL_NAMES, type BuiltinToolContext, builtinTools } from './builtin-tools.js';
export {
  type AgentFileSubjectOptions,
  agentFileSubject,
  createChaosSubject,
  defaultChaosTask,
} from './chaos-subject.js';
export { main } from './main.js';
