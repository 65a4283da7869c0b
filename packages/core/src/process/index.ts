// `@keel/core/process`: for adapters that start programs (command tools, MCP servers over stdio): a lifeline that
// ends them when keel's process dies in a way it cannot clean up after (SIGKILL included).
export { lifelinePid, releaseFromLifeline, tieToLifeline } from './lifeline.js';
