import { dirname, join } from 'node:path';
import { type Agent, agent, type RunStore, type Tool } from '@keel/core';
import { type AgentFile, loadAgentFile } from './agent-file.js';
import { agentOptionsFromFile } from './agent-options.js';
import { BUILTIN_TOOL_NAMES, builtinTools } from './builtin-tools.js';
import { type ResolvedModels, resolveModels } from './models.js';

/** An agent built from an agent file, with what must be closed afterwards. */
export interface BuiltAgent {
  file: AgentFile;
  agent: Agent<string>;
  models: ResolvedModels;
}

/** Reads an agent file and builds the agent it describes, durable on `store`. */
export async function buildAgent(options: {
  agentFile: string;
  workingDirectory: string;
  environment: NodeJS.ProcessEnv;
  store: RunStore;
  faults?: string;
  seed?: number;
}): Promise<BuiltAgent> {
  const file = await loadAgentFile(options.agentFile, BUILTIN_TOOL_NAMES);
  const available = builtinTools({
    filesDirectory: dirname(options.agentFile),
    outboxPath: join(options.workingDirectory, '.keel', 'outbox.jsonl'),
  });
  const tools: Tool[] = file.tools.map((name) => available.get(name)!);
  const models = resolveModels(file, {
    environment: options.environment,
    ...(options.faults === undefined ? {} : { faults: options.faults }),
    ...(options.seed === undefined ? {} : { seed: options.seed }),
  });
  const built = agent(
    agentOptionsFromFile(file, {
      model: models.model,
      fallbacks: models.fallbacks,
      tools,
      store: options.store,
    }),
  );
  return { file, agent: built, models };
}
