// An agent file as a chaos subject: the agent `keel run` builds from the file, with its models replaced by the
// scenario's simulated ones and its tools instrumented. Also the worker module of the crash and quota scenarios (the
// `createChaosSubject` export), so that a worker process builds the very same agent.
import { dirname, join } from 'node:path';
import type { TrustFlags } from '@keel/agent-file';
import { type AgentFile, loadAgentFile } from '@keel/agent-file';
import { type ChaosEnvironment, type ChaosSubject, keelSubject } from '@keel/chaos';
import { type AgentOptions, agent, type JsonValue, KeelError, type Tool } from '@keel/core';
import { SqliteRunStore } from '@keel/store-sqlite';
import { agentOptionsFromFile } from '../../build/agent-options.js';
import { buildAgentTools } from '../../build/agent-tools.js';
import { modelChainOf } from '../../build/models.js';
import { BUILTIN_TOOL_NAMES, builtinTools } from '../../builtin-tools/builtin-tools.js';

/** Options of {@link createChaosSubject}: plain JSON, since a worker process receives them too. */
export interface AgentFileSubjectOptions {
  /** The agent file, as an absolute path. */
  agentFile: string;
  /** The subject's name in the scorecard. Defaults to `keel (<agent name>)`. */
  name?: string;
  /** `--allow-host`, `--allow-programs` and `--allow-env`, for the worker process to load the file with. */
  trust?: TrustFlags;
  /** `--allow-key-host` values, likewise. */
  allowedKeyHosts?: string[];
}

/**
 * The agent an agent file describes, as a chaos subject: its limits, retry settings, instructions and tools as
 * `keel run` builds them, durable on a SQLite store in the scenario's directory (one lease owner per scenario, as a
 * restarted worker with a stable identity has), with as many fallbacks as the file's chain has. Throws the file's
 * `config.invalid` errors.
 */
export async function createChaosSubject(options: JsonValue): Promise<ChaosSubject> {
  const { agentFile, name, trust, allowedKeyHosts } = (options ?? {}) as Partial<AgentFileSubjectOptions>;
  if (typeof agentFile !== 'string') {
    throw new KeelError(
      'config.invalid',
      'createChaosSubject(options): agentFile must be the path of an agent file',
    );
  }
  const file = await loadAgentFile(agentFile, BUILTIN_TOOL_NAMES, {
    ...trust,
    ...(allowedKeyHosts === undefined ? {} : { allowedKeyHosts }),
  });
  return agentFileSubject(file, {
    agentFile,
    ...(name === undefined ? {} : { name }),
    ...(trust === undefined ? {} : { trust }),
    ...(allowedKeyHosts === undefined ? {} : { allowedKeyHosts }),
  });
}

/**
 * What a program adds to an agent file's subject (not JSON: a worker process gets it from the worker module named in
 * `worker`, whose `createChaosSubject` passes it again).
 */
export interface AgentFileSubjectExtras {
  /** The worker module that makes this same subject. Defaults to this module (the file's subject, no extras). */
  worker?: ChaosSubject['worker'];
  /** The only scenarios the subject runs (`ChaosSubject.scenarios`). Defaults to every scenario. */
  scenarios?: readonly string[];
  /**
   * Options laid over those the file gives the agent (such as `pace`), made once per scenario, with what to release
   * after it. Defaults to none.
   */
  extend?(environment: ChaosEnvironment): Promise<{
    options: Partial<AgentOptions<string>>;
    close?(): Promise<void>;
  }>;
}

/** The chaos subject of an agent file already loaded (see {@link createChaosSubject}). */
export function agentFileSubject(
  file: AgentFile,
  options: AgentFileSubjectOptions,
  extras: AgentFileSubjectExtras = {},
): ChaosSubject {
  return keelSubject({
    name: options.name ?? `keel (${file.name})`,
    fallbacks: modelChainOf(file).length - 1,
    worker: extras.worker ?? {
      module: import.meta.url,
      options: JSON.parse(JSON.stringify(options)) as JsonValue,
    },
    ...(extras.scenarios === undefined ? {} : { scenarios: extras.scenarios }),
    build: async ({ models: [model, ...fallbacks], environment, childTool }) => {
      const available = builtinTools({
        filesDirectory: dirname(file.path),
        outboxPath: join(environment.directory, 'outbox.jsonl'),
      });
      // The file's tools as keel run builds them; the scenario's tool faults reach the tools keel calls in process
      // (MCP toolsets are sources of tools that change, and are passed as they are).
      const declared = await buildAgentTools(file, available, process.env);
      const plain = declared.tools.filter((entry): entry is Tool => 'execute' in entry);
      const instrumented = environment.instrumentTools(plain);
      // The parent of a nested scenario has one tool: the agent tool that runs the child (built from the same file).
      const tools =
        childTool === undefined
          ? declared.tools.map((entry) => ('execute' in entry ? instrumented[plain.indexOf(entry)]! : entry))
          : [childTool];
      const store = new SqliteRunStore(join(environment.directory, 'keel.db'));
      let extension: Awaited<ReturnType<NonNullable<typeof extras.extend>>> | undefined;
      const close = async () => {
        await Promise.all(declared.toolsets.map((toolset) => toolset.close()));
        await store.close();
        await extension?.close?.();
      };
      try {
        extension = await extras.extend?.(environment);
        const built = agent({
          ...agentOptionsFromFile(file, {
            model,
            fallbacks,
            tools,
            store,
            durability: { owner: `keel-chaos-worker:${environment.scenario}` },
          }),
          ...extension?.options,
        });
        return { agent: built, close };
      } catch (error) {
        // Nothing built is left open: the toolsets' processes, the store, the extension's connections.
        await close().catch(() => undefined);
        throw error;
      }
    },
  });
}

/** Tasks that make the simulated model call each built-in tool with arguments it accepts. */
const TOOL_TASKS: Partial<Record<string, string>> = {
  get_weather: 'What is the weather in Paris?',
  create_ticket: 'Open a ticket titled Paris trip with low priority.',
};

/**
 * The task `keel chaos` gives an agent file's runs by default: one that makes the simulated model call the file's
 * weather and ticket tools (the others are left out: the simulated model cannot fill their arguments), or a plain
 * question without tools.
 */
export function defaultChaosTask(toolNames: readonly string[]): string {
  const parts = toolNames.flatMap((name) => TOOL_TASKS[name] ?? []);
  return parts.length === 0 ? 'Say hello in one sentence.' : parts.join(' ');
}
