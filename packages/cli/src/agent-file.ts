import { readFile } from 'node:fs/promises';
import { KeelError } from '@keel/core';
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument, type YAMLMap } from 'yaml';

/** Which API a model is reached through. `simulated` is the offline, in-process provider. */
export type ProviderKind = 'simulated' | 'openai' | 'anthropic';

/** A model as an agent file names it. */
export interface ModelEntry {
  provider: ProviderKind;
  name: string;
  /** Base URL of an OpenAI-compatible or Anthropic API. Defaults to the vendor's public endpoint. */
  baseUrl?: string;
  /** The environment variable holding the API key. Defaults to OPENAI_API_KEY or ANTHROPIC_API_KEY. */
  apiKeyEnv?: string;
  contextWindowTokens?: number;
  /** For the simulated provider only: this model's fault schedule, such as `rate_limit=1`. */
  faults?: string;
}

/** An agent file, validated. */
export interface AgentFile {
  path: string;
  name: string;
  instructions?: string;
  model?: ModelEntry;
  fallbacks: ModelEntry[];
  tools: string[];
  limits: { maxTurns?: number; timeoutMs?: number; maxTokens?: number; maxParallelToolCalls?: number };
  retry: { maxAttempts?: number };
}

const PROVIDERS: readonly ProviderKind[] = ['simulated', 'openai', 'anthropic'];
const TOP_LEVEL_FIELDS = ['name', 'instructions', 'model', 'fallbacks', 'tools', 'limits', 'retry'] as const;
const MODEL_FIELDS = ['provider', 'name', 'baseUrl', 'apiKeyEnv', 'contextWindowTokens', 'faults'] as const;
const LIMIT_FIELDS = ['maxTurns', 'timeoutMs', 'maxTokens', 'maxParallelToolCalls'] as const;

/**
 * Reads and validates an agent file. Every problem is a `config.invalid` KeelError whose message names the file,
 * the line and column, and the field, such as `agent.yaml:7:14: limits.maxTurns must be a positive integer`.
 */
export async function loadAgentFile(path: string, knownTools: readonly string[]): Promise<AgentFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new KeelError('config.invalid', `Cannot read agent file ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return parseAgentFile(text, path, knownTools);
}

/** Validates the text of an agent file; `path` is used in messages only. */
export function parseAgentFile(text: string, path: string, knownTools: readonly string[]): AgentFile {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false });
  const where = (node: Node | null | undefined): string => {
    const offset = node?.range?.[0] ?? 0;
    const position = lineCounter.linePos(offset);
    return `${path}:${position.line}:${position.col}`;
  };
  const fail = (node: Node | null | undefined, field: string, problem: string): never => {
    throw new KeelError('config.invalid', `${where(node)}: ${field} ${problem}`, {
      data: { file: path, field },
    });
  };

  const syntaxError = document.errors[0];
  if (syntaxError !== undefined) {
    const position = lineCounter.linePos(syntaxError.pos[0]);
    const at = `${path}:${position.line}:${position.col}`;
    throw new KeelError('config.invalid', `${at}: invalid YAML: ${syntaxError.message.split('\n')[0]}`, {
      data: { file: path },
    });
  }
  const root = document.contents;
  if (!isMap(root)) return fail(root, 'the file', 'must be a mapping with at least a `name` field');

  rejectUnknownFields(root, TOP_LEVEL_FIELDS, '', fail);
  const readString = (map: YAMLMap, key: string, field: string, required: boolean): string | undefined => {
    const node = map.get(key, true) as Node | undefined;
    if (node === undefined) return required ? fail(map, field, 'is required') : undefined;
    if (!isScalar(node) || typeof node.value !== 'string' || node.value.trim() === '') {
      return fail(node, field, 'must be a non-empty string');
    }
    return node.value;
  };
  const readPositiveInteger = (map: YAMLMap, key: string, field: string): number | undefined => {
    const node = map.get(key, true) as Node | undefined;
    if (node === undefined) return undefined;
    if (
      !isScalar(node) ||
      typeof node.value !== 'number' ||
      !Number.isInteger(node.value) ||
      node.value <= 0
    ) {
      return fail(
        node,
        field,
        `must be a positive integer (got ${JSON.stringify(isScalar(node) ? node.value : '…')})`,
      );
    }
    return node.value;
  };

  const readModel = (node: Node | null | undefined, field: string): ModelEntry => {
    if (isScalar(node) && typeof node.value === 'string') {
      // Short form: `provider:model`, or a bare model name on the simulated provider.
      const [first, ...rest] = node.value.split(':');
      const provider = rest.length === 0 ? 'simulated' : first;
      const name = rest.length === 0 ? first : rest.join(':');
      if (!PROVIDERS.includes(provider as ProviderKind)) {
        return fail(
          node,
          field,
          `names an unknown provider "${provider}" (use one of: ${PROVIDERS.join(', ')})`,
        );
      }
      if (!name) return fail(node, field, 'must name a model');
      return { provider: provider as ProviderKind, name };
    }
    if (!isMap(node))
      return fail(node, field, 'must be "provider:model" or a mapping with provider and name');
    rejectUnknownFields(node, MODEL_FIELDS, `${field}.`, fail);
    const provider = readString(node, 'provider', `${field}.provider`, false) ?? 'simulated';
    if (!PROVIDERS.includes(provider as ProviderKind)) {
      fail(
        node.get('provider', true) as Node,
        `${field}.provider`,
        `must be one of: ${PROVIDERS.join(', ')}`,
      );
    }
    const entry: ModelEntry = {
      provider: provider as ProviderKind,
      name: readString(node, 'name', `${field}.name`, true)!,
    };
    const baseUrl = readString(node, 'baseUrl', `${field}.baseUrl`, false);
    if (baseUrl !== undefined) {
      if (!URL.canParse(baseUrl))
        fail(node.get('baseUrl', true) as Node, `${field}.baseUrl`, 'must be a URL');
      entry.baseUrl = baseUrl;
    }
    const apiKeyEnv = readString(node, 'apiKeyEnv', `${field}.apiKeyEnv`, false);
    if (apiKeyEnv !== undefined) entry.apiKeyEnv = apiKeyEnv;
    const contextWindowTokens = readPositiveInteger(
      node,
      'contextWindowTokens',
      `${field}.contextWindowTokens`,
    );
    if (contextWindowTokens !== undefined) entry.contextWindowTokens = contextWindowTokens;
    const faults = readString(node, 'faults', `${field}.faults`, false);
    if (faults !== undefined) {
      if (entry.provider !== 'simulated') {
        fail(node.get('faults', true) as Node, `${field}.faults`, 'applies only to the simulated provider');
      }
      entry.faults = faults;
    }
    return entry;
  };

  const result: AgentFile = {
    path,
    name: readString(root, 'name', 'name', true)!,
    fallbacks: [],
    tools: [],
    limits: {},
    retry: {},
  };
  const instructions = readString(root, 'instructions', 'instructions', false);
  if (instructions !== undefined) result.instructions = instructions;
  const modelNode = root.get('model', true) as Node | undefined;
  if (modelNode !== undefined) result.model = readModel(modelNode, 'model');

  const fallbacksNode = root.get('fallbacks', true) as Node | undefined;
  if (fallbacksNode !== undefined) {
    if (!isSeq(fallbacksNode)) fail(fallbacksNode, 'fallbacks', 'must be a list of models');
    else
      result.fallbacks = fallbacksNode.items.map((item, index) =>
        readModel(item as Node, `fallbacks[${index}]`),
      );
  }

  const toolsNode = root.get('tools', true) as Node | undefined;
  if (toolsNode !== undefined) {
    if (!isSeq(toolsNode)) fail(toolsNode, 'tools', 'must be a list of tool names');
    else {
      result.tools = toolsNode.items.map((item, index) => {
        const node = item as Node;
        if (!isScalar(node) || typeof node.value !== 'string') {
          return fail(node, `tools[${index}]`, 'must be a tool name');
        }
        if (!knownTools.includes(node.value)) {
          return fail(
            node,
            `tools[${index}]`,
            `names an unknown tool "${node.value}" (built-in tools: ${knownTools.join(', ')})`,
          );
        }
        return node.value;
      });
    }
  }

  const limitsNode = root.get('limits', true) as Node | undefined;
  if (limitsNode !== undefined) {
    if (!isMap(limitsNode)) fail(limitsNode, 'limits', 'must be a mapping');
    else {
      rejectUnknownFields(limitsNode, LIMIT_FIELDS, 'limits.', fail);
      for (const key of LIMIT_FIELDS) {
        const value = readPositiveInteger(limitsNode, key, `limits.${key}`);
        if (value !== undefined) result.limits[key] = value;
      }
    }
  }

  const retryNode = root.get('retry', true) as Node | undefined;
  if (retryNode !== undefined) {
    if (!isMap(retryNode)) fail(retryNode, 'retry', 'must be a mapping');
    else {
      rejectUnknownFields(retryNode, ['maxAttempts'], 'retry.', fail);
      const maxAttempts = readPositiveInteger(retryNode, 'maxAttempts', 'retry.maxAttempts');
      if (maxAttempts !== undefined) result.retry.maxAttempts = maxAttempts;
    }
  }
  return result;
}

function rejectUnknownFields(
  map: YAMLMap,
  allowed: readonly string[],
  prefix: string,
  fail: (node: Node | null | undefined, field: string, problem: string) => never,
): void {
  for (const pair of map.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    if (!allowed.includes(key)) {
      fail(pair.key as Node, `${prefix}${key}`, `is not a known field (known: ${allowed.join(', ')})`);
    }
  }
}
