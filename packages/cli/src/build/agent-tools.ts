import type { AgentFile } from '@keel/agent-file';
import { commandToolOptions, httpToolOptions, mcpToolsOptions } from '@keel/agent-file';
import { type Agent, agentTool, KeelError, type Tool, type ToolSource } from '@keel/core';
import type { McpToolset } from '@keel/mcp';
import { commandTool, httpTool } from '@keel/tools';

/** The tools an agent file declares, built; the MCP toolsets among them must be closed when the command ends. */
export interface AgentTools {
  /** In the file's order, for `agent({ tools })`: tools, and MCP toolsets as tool sources. */
  tools: (Tool | ToolSource)[];
  /** The MCP toolsets. None has started a server yet: the agent connects each at its first step. */
  toolsets: McpToolset[];
  /** Each entry that runs a program or reaches a server, and what it runs or reaches, for the command line to show. */
  summary: string[];
}

/**
 * Builds an agent file's tools: built-in ones from `builtins`, MCP toolsets (lazy: no server starts here; `@keel/mcp`
 * is loaded only for a file that has one), command and HTTP tools. Variables the file names take their values from `environment`; an unset secret header variable is
 * refused at its field.
 */
export async function buildAgentTools(
  file: AgentFile,
  builtins: ReadonlyMap<string, Tool>,
  environment: NodeJS.ProcessEnv,
  childAgent?: (file: AgentFile) => Promise<Agent<string>>,
): Promise<AgentTools> {
  // The MCP SDK takes a while to load: only files with an MCP server pay for it.
  const mcp = file.tools.some((entry) => entry.kind === 'mcp') ? await import('@keel/mcp') : undefined;
  const built: AgentTools = { tools: [], toolsets: [], summary: [] };
  const locate = (field: string) => (header: string) => {
    const named = `${field}.headers.${header}`;
    return { location: file.locations[named] ?? file.path, field: named, file: file.path };
  };
  try {
    for (const entry of file.tools) {
      switch (entry.kind) {
        case 'builtin':
          built.tools.push(builtins.get(entry.name)!);
          break;
        case 'mcp': {
          const toolset = mcp!.mcpTools(mcpToolsOptions(entry, environment, locate(entry.field)));
          built.toolsets.push(toolset);
          built.tools.push(toolset);
          const { server } = entry;
          const reached =
            server.kind === 'http'
              ? server.url
              : server.package === undefined
                ? [server.command, ...server.args].join(' ')
                : [server.package, ...server.args.slice(1)].join(' ');
          built.summary.push(`mcp ${toolset.name} (${reached})`);
          break;
        }
        case 'command':
          built.tools.push(commandTool(commandToolOptions(entry, environment)));
          built.summary.push(`command ${entry.name} (${String(entry.argv[0])})`);
          break;
        case 'http':
          built.tools.push(httpTool(httpToolOptions(entry, environment, locate(entry.field))));
          built.summary.push(`http ${entry.name} (${entry.method ?? 'GET'} ${entry.url})`);
          break;
        case 'agent': {
          if (childAgent === undefined)
            throw new KeelError(
              'config.invalid',
              `${entry.field}: agent tools need a builder of child agents`,
            );
          const child = await childAgent(entry.file);
          built.tools.push(agentTool(child, { name: entry.name, description: entry.description }));
          built.summary.push(`agent ${entry.name} (${entry.file.path})`);
          break;
        }
      }
    }
  } catch (error) {
    // Nothing has started yet, but a toolset made before the failure is closed all the same.
    for (const toolset of built.toolsets) void toolset.close();
    throw error;
  }
  return built;
}
