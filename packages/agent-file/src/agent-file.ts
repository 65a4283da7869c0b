import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { KeelError } from '@keel/core';
import type { ToolChoice } from '@keel/core/adapter';
import { isMap, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import { childFileLoader, type HandoffEntry, readHandoffs } from './agents.js';
import { type BudgetsEntry, readBudgets } from './budgets.js';
import { type ModelEntry, readModel } from './model.js';
import { FieldReader } from './reader.js';
import { readToolChoice } from './tool-choice.js';
import { readTools, type ToolEntry } from './tools.js';
import { checkTrust, type TrustFlags } from './trust.js';

export type { ModelEntry, ProviderKind } from './model.js';
export type { ToolEntry } from './tools.js';

/** An agent file, validated. */
export interface AgentFile {
  path: string;
  name: string;
  instructions?: string;
  model?: ModelEntry;
  fallbacks: ModelEntry[];
  /** Built-in tool names, MCP servers, command tools, HTTP tools and agent files (`agent:`), in the file's order. */
  tools: ToolEntry[];
  /** Agent files the agent may hand the conversation over to (`handoffs:`), read and checked. */
  handoffs: HandoffEntry[];
  limits: { maxTurns?: number; timeoutMs?: number; maxTokens?: number; maxParallelToolCalls?: number };
  retry: { maxAttempts?: number };
  /** `toolChoice:` (auto, none, required, or `{ name }`), passed to `agent({ toolChoice })`. Defaults to none. */
  toolChoice?: ToolChoice;
  /**
   * The agent's model call timeouts, in milliseconds, from the top-level fields of the same names: `modelTimeoutMs`
   * (one model request), `streamFirstByteTimeoutMs` and `streamIdleTimeoutMs` (a streamed answer's first byte, and
   * the silence between its chunks). Each unset one keeps the agent's default (120_000, 30_000, 15_000).
   */
  timeouts: { modelTimeoutMs?: number; streamFirstByteTimeoutMs?: number; streamIdleTimeoutMs?: number };
  /** Token and cost budgets (see {@link BudgetsEntry}). Defaults to none. */
  budgets?: BudgetsEntry;
  /**
   * `pace: true`: the agent spaces its model calls by what providers say of their rate limits (core's `pace`); under
   * `keel worker` the window is shared by the fleet through its Redis. Defaults to false.
   */
  pace?: boolean;
  /** `file:line:column` of each field the file sets, by field path (`model`, `fallbacks[1].apiKeyEnv`). */
  locations: Readonly<Record<string, string>>;
}

/**
 * Options of {@link loadAgentFile} and {@link parseAgentFile}: the consent of the person running keel
 * (`--allow-host`, `--allow-programs`, `--allow-env`, `--allow-key-host`; see trust.ts). Each defaults to none: a
 * file that would send data elsewhere than its provider's host or this machine, start a program or pass a secret is
 * refused.
 */
export interface AgentFileOptions extends TrustFlags {
  /**
   * Hosts besides a provider's own that may receive an API key (`--allow-key-host`), as `name` (any port) or
   * `name:port`; a tool's secret header goes only to these. Defaults to none: a file that would send a key elsewhere
   * is refused.
   */
  allowedKeyHosts?: readonly string[];
}

const TIMEOUT_FIELDS = ['modelTimeoutMs', 'streamFirstByteTimeoutMs', 'streamIdleTimeoutMs'] as const;
const TOP_LEVEL_FIELDS = [
  'name',
  'instructions',
  'model',
  'fallbacks',
  'tools',
  'toolChoice',
  'handoffs',
  'limits',
  'retry',
  'budgets',
  'pace',
  ...TIMEOUT_FIELDS,
] as const;
const LIMIT_FIELDS = ['maxTurns', 'timeoutMs', 'maxTokens', 'maxParallelToolCalls'] as const;
const RETRY_FIELDS = ['maxAttempts'] as const;
/** The longest a Node timer can wait, and so the longest run timeout. */
const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * Reads and validates an agent file. Every problem is a `config.invalid` KeelError whose message names the file,
 * the line and column, and the field, such as `agent.yaml:7:14: limits.maxTurns must be a positive integer`, with
 * the name meant for an unknown field or tool (`did you mean limits.maxTurns?`). A file with several mistakes gets
 * them all in one error (a line each, and `data.mistakes`). A file it accepts builds (given the API keys it names).
 * A valid file that would do more than `options` consent to (send data to another host, open the SSRF guard, start a
 * program, pass a secret-looking variable: see trust.ts) is refused too, every missing consent in one error.
 */
export async function loadAgentFile(
  path: string,
  knownTools: readonly string[],
  options: AgentFileOptions = {},
): Promise<AgentFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new KeelError('config.invalid', `Cannot read agent file ${path}: ${(error as Error).message}`, {
      cause: error,
      data: { file: path },
    });
  }
  return parseAgentFile(text, path, knownTools, options);
}

/**
 * Validates the text of an agent file; `path` is used in messages and as the base of `read_file`, of relative `cwd`
 * and of packages an `mcp:` entry names.
 */
export function parseAgentFile(
  text: string,
  path: string,
  knownTools: readonly string[],
  options: AgentFileOptions = {},
  ancestors: readonly string[] = [],
): AgentFile {
  const allowedKeyHosts = options.allowedKeyHosts ?? [];
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false });
  const reader: FieldReader = new FieldReader(path, lineCounter, document);

  const syntaxError = document.errors[0];
  if (syntaxError !== undefined) {
    const { line, col } = lineCounter.linePos(syntaxError.pos[0]);
    throw new KeelError(
      'config.invalid',
      `${path}:${line}:${col}: invalid YAML: ${syntaxError.message.split('\n')[0]}`,
      { data: { file: path, line, column: col } },
    );
  }
  const root = document.contents;
  if (!isMap(root)) return reader.fail(root, 'the file', 'must be a mapping with at least a `name` field');

  // Each field is read on its own: a mistake is recorded and the next field read, so that all are reported at once.
  reader.rejectUnknownFields(root, TOP_LEVEL_FIELDS, '');
  const result: AgentFile = {
    path,
    name: reader.attempt(() => reader.string(root, 'name', 'name', true)!) ?? '',
    fallbacks: [],
    tools: [],
    handoffs: [],
    limits: {},
    retry: {},
    timeouts: {},
    locations: reader.locations,
  };
  const instructions = reader.attempt(() => reader.string(root, 'instructions', 'instructions', false));
  if (instructions !== undefined) result.instructions = instructions;
  const modelNode = reader.node(root, 'model', 'model');
  if (modelNode !== undefined) {
    const model = reader.attempt(() => readModel(reader, modelNode, 'model', allowedKeyHosts));
    if (model !== undefined) result.model = model;
  }

  const fallbacksNode = reader.node(root, 'fallbacks', 'fallbacks');
  if (fallbacksNode !== undefined) {
    if (!isSeq(fallbacksNode)) reader.record(fallbacksNode, 'fallbacks', 'must be a list of models');
    else {
      result.fallbacks = fallbacksNode.items.flatMap((item, index) => {
        const model = reader.attempt(() =>
          readModel(reader, item as Node, `fallbacks[${index}]`, allowedKeyHosts),
        );
        return model === undefined ? [] : [model];
      });
    }
  }

  // A child agent file is read with the same known tools and consent: it cannot widen what the parent may do.
  const loadChild = childFileLoader(reader, path, ancestors, (childText, childPath, chain) =>
    parseAgentFile(childText, childPath, knownTools, options, chain),
  );
  const toolsNode = reader.node(root, 'tools', 'tools');
  if (toolsNode !== undefined) {
    result.tools =
      reader.attempt(() =>
        readTools(reader, toolsNode, knownTools, { directory: dirname(path), allowedKeyHosts }, loadChild),
      ) ?? [];
  }
  const handoffsNode = reader.node(root, 'handoffs', 'handoffs');
  if (handoffsNode !== undefined)
    result.handoffs = reader.attempt(() => readHandoffs(reader, handoffsNode, loadChild)) ?? [];

  const toolChoiceNode = reader.node(root, 'toolChoice', 'toolChoice');
  if (toolChoiceNode !== undefined) {
    const toolChoice = reader.attempt(() => readToolChoice(reader, toolChoiceNode, result.tools));
    if (toolChoice !== undefined) result.toolChoice = toolChoice;
  }

  const limitsNode = reader.node(root, 'limits', 'limits');
  if (limitsNode !== undefined) {
    if (!isMap(limitsNode)) reader.record(limitsNode, 'limits', 'must be a mapping');
    else {
      reader.rejectUnknownFields(limitsNode, LIMIT_FIELDS, 'limits.');
      for (const key of LIMIT_FIELDS) {
        const maximum = key === 'timeoutMs' ? MAX_TIMEOUT_MS : undefined;
        const value = reader.attempt(() => reader.positiveInteger(limitsNode, key, `limits.${key}`, maximum));
        if (value !== undefined) result.limits[key] = value;
      }
    }
  }

  const retryNode = reader.node(root, 'retry', 'retry');
  if (retryNode !== undefined) {
    if (!isMap(retryNode)) reader.record(retryNode, 'retry', 'must be a mapping');
    else {
      reader.rejectUnknownFields(retryNode, RETRY_FIELDS, 'retry.');
      const maxAttempts = reader.attempt(() =>
        reader.positiveInteger(retryNode, 'maxAttempts', 'retry.maxAttempts'),
      );
      if (maxAttempts !== undefined) result.retry.maxAttempts = maxAttempts;
    }
  }
  for (const key of TIMEOUT_FIELDS) {
    const value = reader.attempt(() => reader.positiveInteger(root, key, key, MAX_TIMEOUT_MS));
    if (value !== undefined) result.timeouts[key] = value;
  }
  const budgetsNode = reader.node(root, 'budgets', 'budgets');
  if (budgetsNode !== undefined) {
    const budgets = reader.attempt(() => readBudgets(reader, budgetsNode));
    if (budgets !== undefined) result.budgets = budgets;
  }
  const pace = reader.attempt(() => reader.boolean(root, 'pace', 'pace'));
  if (pace === true) result.pace = true;
  reader.finish();
  checkTrust(result, options, allowedKeyHosts);
  return result;
}

// The loader's field lists, for the agent-file reference (fields.ts).
export { LIMIT_FIELDS, RETRY_FIELDS, TOP_LEVEL_FIELDS };
