// @keel/agent-file: reads and checks a keel agent file (YAML) into an AgentFile: its model and fallbacks, tools
// (built-in names, `mcp:` servers, `command:` and `http:` tools), limits and retry, with the consent the person running
// keel gives (trust.ts) and the hosts an API key may go to (key-hosts.ts). It builds nothing: @keel/cli does.
export {
  type AgentFile,
  type AgentFileOptions,
  loadAgentFile,
  type ModelEntry,
  type ProviderKind,
  parseAgentFile,
  type ToolEntry,
} from './agent-file.js';
export type { AgentEntry, HandoffEntry } from './agents.js';
export type { BudgetsEntry } from './budgets.js';
export { type CommandEntry, commandToolOptions } from './command.js';
export { type HttpEntry, httpToolOptions } from './http.js';
export { API_KEY_VARIABLE, type KeyedModel, keyVariableOf, parseAllowedHost } from './key-hosts.js';
export { type McpEntry, type McpServerEntry, mcpToolsOptions } from './mcp.js';
export type { BuiltinEntry } from './tools.js';
export { mergeTrustFlags, type TrustFlags, trustFlagsOf } from './trust.js';
