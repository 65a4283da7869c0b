// The public surface of @keel/tools. Every name is exported explicitly: adding one here makes it public API.
export type { CommandTemplate } from './command/argv.js';
export { type CommandOutput, type CommandToolOptions, commandTool } from './command/command-tool.js';
export { DEFAULT_INHERITED_ENV } from './command/environment.js';
export { PRLIMIT_PATHS, type ResourceLimits } from './command/resource-limits.js';
export type { CommandUser } from './command/run-process.js';
export { type HostResolver, type ResolvedAddress, systemResolver } from './http/guarded-lookup.js';
export { type HttpMethod, type HttpOutput, type HttpToolOptions, httpTool } from './http/http-tool.js';
export type { HeadersHook } from './http/request-headers.js';
