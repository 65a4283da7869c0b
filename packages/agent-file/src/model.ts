import { KeelError } from '@keel/core';
import { parseFaults } from '@keel/simulated';
import { isMap, isScalar, type Node } from 'yaml';
import {
  API_KEY_VARIABLE,
  DEFAULT_KEY_VARIABLES,
  hostAllowed,
  hostOf,
  keyVariableOf,
  onProviderHost,
  PROVIDER_HOSTS,
} from './key-hosts.js';
import type { FieldReader } from './reader.js';

/** Which API a model is reached through. `simulated` is the offline, in-process provider. */
export type ProviderKind = 'simulated' | 'openai' | 'anthropic';

/** A model as an agent file names it. */
export interface ModelEntry {
  provider: ProviderKind;
  name: string;
  /**
   * Base URL of an OpenAI-compatible or Anthropic API (http or https only). Defaults to the vendor's public endpoint.
   * An API key goes to a host other than the vendor's own only when `--allow-key-host` names that host; an
   * OpenAI-compatible server elsewhere gets no key unless `apiKeyEnv` names one.
   */
  baseUrl?: string;
  /**
   * The environment variable holding the API key: upper case, ending in `_API_KEY` or `_API_TOKEN`. Defaults to
   * OPENAI_API_KEY or ANTHROPIC_API_KEY.
   */
  apiKeyEnv?: string;
  /** The model's context window in tokens. Defaults to unknown. */
  contextWindowTokens?: number;
  /** For the simulated provider only: this model's fault schedule, such as `rate_limit=1`. Defaults to none. */
  faults?: string;
  /**
   * For the openai and simulated providers: the API spoken, Chat Completions (`chat`) or the Responses API
   * (`responses`, `openaiResponses`). The simulated models of a file share one server, which speaks the first one's.
   * Defaults to `chat`.
   */
  api?: 'chat' | 'responses';
}

export const PROVIDERS: readonly ProviderKind[] = ['simulated', 'openai', 'anthropic'];
const MODEL_FIELDS = [
  'provider',
  'name',
  'baseUrl',
  'apiKeyEnv',
  'contextWindowTokens',
  'faults',
  'api',
] as const;

/**
 * Reads the model at `node` (`provider:model`, a bare simulated model name, or a mapping) as `field`; refuses what
 * the providers would refuse, and a key the file would send to a host `allowedKeyHosts` does not name.
 */
export function readModel(
  reader: FieldReader,
  node: Node | null | undefined,
  field: string,
  allowedKeyHosts: readonly string[],
): ModelEntry {
  reader.locations[field] = reader.where(node);
  if (isScalar(node) && typeof node.value === 'string') {
    // Short form: `provider:model`, or a bare model name on the simulated provider.
    const [first, ...rest] = node.value.split(':');
    const provider = rest.length === 0 ? 'simulated' : first!;
    const name = rest.length === 0 ? first! : rest.join(':');
    if (!PROVIDERS.includes(provider as ProviderKind)) {
      reader.fail(
        node,
        field,
        `names an unknown provider "${provider}" (use one of: ${PROVIDERS.join(', ')})`,
      );
    }
    if (name.trim() === '') reader.fail(node, field, 'must name a model, such as openai:gpt-4.1-mini');
    const entry: ModelEntry = { provider: provider as ProviderKind, name };
    checkKeyHost(reader, node, field, entry, allowedKeyHosts);
    return entry;
  }
  if (!isMap(node))
    return reader.fail(node, field, 'must be "provider:model" or a mapping with provider and name');
  reader.rejectUnknownFields(node, MODEL_FIELDS, `${field}.`);
  const provider = reader.string(node, 'provider', `${field}.provider`, false) ?? 'simulated';
  if (!PROVIDERS.includes(provider as ProviderKind)) {
    reader.fail(
      node.get('provider', true) as Node,
      `${field}.provider`,
      `must be one of: ${PROVIDERS.join(', ')}`,
    );
  }
  const entry: ModelEntry = {
    provider: provider as ProviderKind,
    name: reader.string(node, 'name', `${field}.name`, true)!,
  };
  const realOnly = (key: string) => {
    if (entry.provider === 'simulated') {
      reader.fail(
        node.get(key, true) as Node,
        `${field}.${key}`,
        'applies only to the openai and anthropic providers',
      );
    }
  };
  const baseUrl = reader.string(node, 'baseUrl', `${field}.baseUrl`, false);
  if (baseUrl !== undefined) {
    realOnly('baseUrl');
    const protocol = URL.canParse(baseUrl) ? new URL(baseUrl).protocol : undefined;
    if (protocol !== 'http:' && protocol !== 'https:') {
      reader.fail(
        node.get('baseUrl', true) as Node,
        `${field}.baseUrl`,
        `must be an http or https URL (got ${baseUrl})`,
      );
    }
    entry.baseUrl = baseUrl;
  }
  const apiKeyEnv = reader.string(node, 'apiKeyEnv', `${field}.apiKeyEnv`, false);
  if (apiKeyEnv !== undefined) {
    realOnly('apiKeyEnv');
    if (!API_KEY_VARIABLE.test(apiKeyEnv)) {
      reader.fail(
        node.get('apiKeyEnv', true) as Node,
        `${field}.apiKeyEnv`,
        `must name an API key variable, upper case and ending in _API_KEY or _API_TOKEN (got ${apiKeyEnv})`,
        'An agent file may make keel send only API key variables, such as OPENAI_API_KEY or LITELLM_API_KEY',
      );
    }
    entry.apiKeyEnv = apiKeyEnv;
  }
  const contextWindowTokens = reader.positiveInteger(
    node,
    'contextWindowTokens',
    `${field}.contextWindowTokens`,
  );
  if (contextWindowTokens !== undefined) entry.contextWindowTokens = contextWindowTokens;
  const api = reader.string(node, 'api', `${field}.api`, false);
  if (api !== undefined) {
    const apiNode = node.get('api', true) as Node;
    if (entry.provider !== 'openai' && entry.provider !== 'simulated')
      reader.fail(apiNode, `${field}.api`, 'applies only to the openai and simulated providers');
    if (api !== 'chat' && api !== 'responses')
      reader.fail(apiNode, `${field}.api`, `must be chat or responses (got ${api})`);
    entry.api = api as 'chat' | 'responses';
  }
  const faults = reader.string(node, 'faults', `${field}.faults`, false);
  if (faults !== undefined) {
    const faultsNode = node.get('faults', true) as Node;
    if (entry.provider !== 'simulated') {
      reader.fail(faultsNode, `${field}.faults`, 'applies only to the simulated provider');
    }
    let perModel: string[];
    try {
      perModel = Object.keys(parseFaults(faults).models);
    } catch (error) {
      const problem = KeelError.isInstance(error) ? error.message : String(error);
      return reader.fail(
        faultsNode,
        `${field}.faults`,
        `is not a fault schedule: ${problem}`,
        KeelError.isInstance(error) ? error.guidance : undefined,
      );
    }
    if (perModel.length > 0) {
      reader.fail(
        faultsNode,
        `${field}.faults`,
        `applies to this model only: write KIND=RATE or sequence=... entries without a MODEL: prefix or a preset (got ${faults})`,
        'A preset such as demo sets faults for several models: give it on the command line, --faults demo',
      );
    }
    entry.faults = faults;
  }
  checkKeyHost(reader, node, field, entry, allowedKeyHosts);
  return entry;
}

/** Refuses a model that would send an API key to a host that is neither its provider's nor allowed. */
function checkKeyHost(
  reader: FieldReader,
  node: Node,
  field: string,
  entry: ModelEntry,
  allowedKeyHosts: readonly string[],
): void {
  const variable = keyVariableOf(entry);
  if (variable === undefined || entry.provider === 'simulated') return;
  if (onProviderHost(entry) || hostAllowed(entry, allowedKeyHosts)) return;
  const host = hostOf(entry);
  // The provider's own host over plain http: show the scheme, since that is what is wrong.
  const shown = host === PROVIDER_HOSTS[entry.provider] ? `http://${host}` : host;
  const at = isMap(node) ? ((node.get('baseUrl', true) as Node | undefined) ?? node) : node;
  const usesDefault =
    entry.apiKeyEnv === undefined ? ` (the default, ${DEFAULT_KEY_VARIABLES[entry.provider]})` : '';
  reader.fail(
    at,
    `${field}.baseUrl`,
    `would receive the API key in ${variable}${usesDefault}, but ${shown} is not ${entry.provider}'s own host (https://${PROVIDER_HOSTS[entry.provider]})`,
    `If you trust ${host} with that key, run with --allow-key-host ${host}`,
  );
}

// The loader's field list, for the agent-file reference (fields.ts).
export { MODEL_FIELDS };
