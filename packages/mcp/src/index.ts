// The public surface of @keel/mcp. Every name is exported explicitly: adding one here makes it public API.

export type { McpTransportKind } from './connection.js';
export type { McpTool } from './mcp-tool.js';
export type {
  McpBreakerOptions,
  McpCommonOptions,
  McpHttpOptions,
  McpHttpTransport,
  McpProgressEvent,
  McpStdioOptions,
  McpToolsOptions,
} from './options.js';
export { type McpToolset, type McpToolsetState, mcpTools } from './toolset.js';
