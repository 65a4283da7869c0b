// @keel/cli as a library: the entry used by the `keel` binary, its built-in tools, and an agent file as a chaos
// subject (what the peer comparison drives). The agent-file reader is @keel/agent-file.
export { BUILTIN_TOOL_NAMES, type BuiltinToolContext, builtinTools } from './builtin-tools/builtin-tools.js';
export {
  type AgentFileSubjectExtras,
  type AgentFileSubjectOptions,
  agentFileSubject,
  createChaosSubject,
  defaultChaosTask,
} from './commands/chaos/chaos-subject.js';
export { main } from './main.js';
