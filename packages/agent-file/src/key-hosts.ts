import { KeelError } from '@keel/core';

// Which environment variable an agent file may make keel send, and to which host. An agent file is data that may
// come from someone else: it must not be able to send an arbitrary secret (AWS_SECRET_ACCESS_KEY) to an arbitrary
// host (http://attacker/v1). The rule:
//
// 1. `apiKeyEnv` must name an API key variable: upper case, ending in `_API_KEY` or `_API_TOKEN`.
// 2. A key goes to the provider's own host over https (api.openai.com, api.anthropic.com) without asking. To any
//    other host (or over plain http) it goes only when the command line names that host:
//    `--allow-key-host llm.internal:4000`.
// 3. An OpenAI-compatible server elsewhere (`baseUrl` on another host) gets no key unless `apiKeyEnv` names one:
//    OPENAI_API_KEY is never sent there by default.
// 4. A tool's secret header (an HTTP tool's, an MCP server's over HTTP) comes from an API key variable named in the
//    file (`{ env: TRACKER_API_TOKEN }`), never from a literal, and goes only to a host the command line names:
//    tools have no "own host".

/** What an `apiKeyEnv` value must look like. */
export const API_KEY_VARIABLE = /^[A-Z][A-Z0-9_]*_API_(KEY|TOKEN)$/;

/** The host each real provider sends its key to when the agent file sets no `baseUrl`. */
export const PROVIDER_HOSTS = { openai: 'api.openai.com', anthropic: 'api.anthropic.com' } as const;

/** The default key variable of each real provider. */
export const DEFAULT_KEY_VARIABLES = { openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY' } as const;

/** A model as far as keys are concerned. */
export interface KeyedModel {
  provider: 'simulated' | 'openai' | 'anthropic';
  baseUrl?: string;
  apiKeyEnv?: string;
}

/**
 * The environment variable whose value keel sends with this model's requests, or undefined when it sends none (the
 * simulated provider; an OpenAI-compatible server on another host with no `apiKeyEnv`).
 */
export function keyVariableOf(model: KeyedModel): string | undefined {
  if (model.provider === 'simulated') return undefined;
  if (model.provider === 'openai' && model.baseUrl !== undefined && !onProviderHost(model))
    return model.apiKeyEnv;
  return model.apiKeyEnv ?? DEFAULT_KEY_VARIABLES[model.provider];
}

/** The host (with its port, if any) the model's requests go to. */
export function hostOf(model: KeyedModel): string {
  if (model.provider === 'simulated') return '127.0.0.1';
  return new URL(model.baseUrl ?? `https://${PROVIDER_HOSTS[model.provider]}`).host;
}

/** Whether the model's requests go to its provider's own host, over https. */
export function onProviderHost(model: KeyedModel): boolean {
  if (model.provider === 'simulated') return false;
  const url = new URL(model.baseUrl ?? `https://${PROVIDER_HOSTS[model.provider]}`);
  return url.protocol === 'https:' && url.host === PROVIDER_HOSTS[model.provider];
}

/**
 * Whether `allowed` (values from {@link parseAllowedHost}) names the model's host: `name` allows that host on any
 * port, `name:port` that port only (443 and 80 included when the URL leaves them implicit).
 */
export function hostAllowed(model: KeyedModel, allowed: readonly string[]): boolean {
  return urlHostAllowed(new URL(model.baseUrl ?? `https://${hostOf(model)}`), allowed);
}

/**
 * Whether `allowed` (values from {@link parseAllowedHost}) names the host of `url`: `name` allows that host on any
 * port, `name:port` that port only (443 and 80 included when the URL leaves them implicit). Tools that send a secret
 * (an agent file's `headers: { authorization: { env: ... } }`) follow this rule for every host.
 */
export function urlHostAllowed(url: URL, allowed: readonly string[]): boolean {
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return allowed.some((entry) => {
    const explicitPort = /:(\d+)$/.exec(entry)?.[1];
    const hostname = explicitPort === undefined ? entry : entry.slice(0, -explicitPort.length - 1);
    return hostname === url.hostname && (explicitPort === undefined || Number(explicitPort) === Number(port));
  });
}

/** Checks and normalises a `--allow-key-host` value: `hostname` or `hostname:port`, the name in lower case. */
export function parseAllowedHost(value: string): string {
  const invalid = () =>
    new KeelError(
      'config.invalid',
      `--allow-key-host takes a host name, with a port if needed (such as llm.internal or 127.0.0.1:4000), not "${value}"`,
    );
  if (value === '' || /[/@?#\s]/.test(value)) throw invalid();
  const explicitPort = /:(\d+)$/.exec(value)?.[1];
  let hostname: string;
  try {
    hostname = new URL(
      `http://${explicitPort === undefined ? value : value.slice(0, -explicitPort.length - 1)}`,
    ).hostname;
  } catch {
    throw invalid();
  }
  if (explicitPort !== undefined && Number(explicitPort) > 65_535) throw invalid();
  return explicitPort === undefined ? hostname : `${hostname}:${Number(explicitPort)}`;
}
