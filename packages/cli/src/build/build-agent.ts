import { dirname, join } from 'node:path';
import type { TrustFlags } from '@keel/agent-file';
import { type AgentFile, loadAgentFile } from '@keel/agent-file';
import { type Agent, agent, type Clock, type DurabilityOptions, type RunStore, type Tool } from '@keel/core';
import { BUILTIN_TOOL_NAMES, builtinTools } from '../builtin-tools/builtin-tools.js';
import { agentOptionsFromFile } from './agent-options.js';
import { type AgentTools, buildAgentTools } from './agent-tools.js';
import type { AgentPolicies } from './fleet-policies.js';
import { type ResolvedModels, resolveModels } from './models.js';

/** An agent built from an agent file, with what must be closed afterwards. */
export interface BuiltAgent {
  file: AgentFile;
  agent: Agent<string>;
  models: ResolvedModels;
  tools: AgentTools;
  /**
   * Closes what the agent opened: its MCP servers (each started at the agent's first step; closing ends their whole
   * process group) and the simulated provider. Call it when the command ends, however it ends.
   */
  close(): Promise<void>;
}

/** What {@link buildAgent} needs beside the agent file. */
export interface BuildOptions {
  workingDirectory: string;
  environment: NodeJS.ProcessEnv;
  store: RunStore;
  /** The simulated provider's fault schedule (`--faults`). Defaults to none. */
  faults?: string;
  /** The fault schedule's seed (`--seed`). Defaults to the schedule's own. */
  seed?: number;
  /** Hosts other than a provider's own that may receive an API key (`--allow-key-host`). Defaults to none. */
  allowedKeyHosts?: readonly string[];
  /** What the person running keel consents to (`--allow-host`, `--allow-programs`, `--allow-env`). Defaults to none. */
  trust?: TrustFlags;
  /** The agent's clock (leases, timeouts). Defaults to the system clock. */
  clock?: Clock;
  /** How runs hold their leases (`keel worker --lease-ttl-ms`). Defaults to the agent's defaults. */
  durability?: DurabilityOptions;
  /** Wraps the agent file's tools before the agent gets them (tracing's `tracedTools`). Defaults to none. */
  wrapTools?: (tools: Tool[]) => Tool[];
  /** The policy state of the agent named, shared beyond the process (`keel worker`). Defaults to the agent's own. */
  policies?: (agentName: string) => AgentPolicies;
}

/** Reads an agent file and builds the agent it describes, durable on `store`. */
export async function buildAgent(options: BuildOptions & { agentFile: string }): Promise<BuiltAgent> {
  const file = await loadAgentFile(options.agentFile, BUILTIN_TOOL_NAMES, {
    allowedKeyHosts: options.allowedKeyHosts ?? [],
    ...options.trust,
  });
  return buildAgentFromFile(file, options);
}

/**
 * Builds the agent a validated agent file describes; its `read_file` reads below the file's directory. Nothing starts
 * here: MCP servers start at the agent's first step, the simulated provider at its first request.
 */
export async function buildAgentFromFile(file: AgentFile, options: BuildOptions): Promise<BuiltAgent> {
  const builtins = builtinTools({
    filesDirectory: dirname(file.path),
    outboxPath: join(options.workingDirectory, '.keel', 'outbox.jsonl'),
  });
  // Child agents (agent tools, handoffs) are built from their own files, on the same store, and closed with this one.
  const children: BuiltAgent[] = [];
  const childAgent = async (childFile: AgentFile) => {
    const child = await buildAgentFromFile(childFile, options);
    children.push(child);
    return child.agent;
  };
  let tools: AgentTools;
  let handoffs: Agent<string>[];
  try {
    tools = await buildAgentTools(file, builtins, options.environment, childAgent);
    handoffs = [];
    for (const entry of file.handoffs) handoffs.push(await childAgent(entry.file));
  } catch (error) {
    await Promise.all(children.map((child) => child.close()));
    throw error;
  }
  const { wrapTools } = options;
  // Plain tools are wrapped (tracing, say); a tool source (an MCP toolset) lists its tools itself and passes as it is.
  const offered =
    wrapTools === undefined
      ? tools.tools
      : tools.tools.map((entry) => ('execute' in entry ? (wrapTools([entry])[0] ?? entry) : entry));
  const close = async () => {
    await Promise.all([
      ...tools.toolsets.map((toolset) => toolset.close()),
      models?.close(),
      ...children.map((child) => child.close()),
    ]);
  };
  let models: ResolvedModels | undefined;
  try {
    models = resolveModels(file, {
      environment: options.environment,
      ...(options.faults === undefined ? {} : { faults: options.faults }),
      ...(options.seed === undefined ? {} : { seed: options.seed }),
    });
    const built = agent(
      agentOptionsFromFile(file, {
        model: models.model,
        fallbacks: models.fallbacks,
        tools: offered,
        handoffs,
        store: options.store,
        ...(options.clock === undefined ? {} : { clock: options.clock }),
        ...(options.durability === undefined ? {} : { durability: options.durability }),
        ...(options.policies === undefined ? {} : { policies: options.policies(file.name) }),
      }),
    );
    return { file, agent: built, models, tools, close };
  } catch (error) {
    void close();
    throw error;
  }
}
