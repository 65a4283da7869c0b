// An agent with the tools of an MCP server: here the reference server `server-everything`, started over stdio
// (its own process group, a minimal environment); the model calls its `echo` tool.
//   npm run build && node examples/dist/mcp-agent.js
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { agent } from '@keel/core';
import { mcpTools } from '@keel/mcp';
import { simulated } from '@keel/simulated';

const require = createRequire(import.meta.url);

/** Runs the example. */
export async function main() {
  const model = simulated();
  const serverPath = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
  // #region mcp-agent
  const everything = mcpTools({
    command: process.execPath, // or 'npx' with ['-y', '@modelcontextprotocol/server-everything', 'stdio']
    args: [serverPath, 'stdio'],
    prefix: 'everything', // everything_echo, everything_get-sum, ...
    timeoutMs: 10_000,
  });
  try {
    // The agent starts the server at its first step, and offers its current tools at every step.
    const assistant = agent({ model, tools: [everything] });
    const result = await assistant.run('Echo hello');
    result.report.toolCalls.byTool; // { everything_echo: 1 }
    return { status: result.status, byTool: result.report.toolCalls.byTool, output: result.output };
  } finally {
    await everything.close(); // the server and its whole process group are gone when this resolves
    // #endregion
    await model.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await main());
