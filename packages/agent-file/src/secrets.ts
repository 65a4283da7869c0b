import { KeelError, redactSecrets } from '@keel/core';
import { isSecretKey } from '@keel/core/adapter';
import { isMap, isScalar, type Node, type YAMLMap } from 'yaml';
import { API_KEY_VARIABLE, urlHostAllowed } from './key-hosts.js';
import { type FieldReader, placeholderHint } from './reader.js';

// What an agent file may say about environment variables and secrets in its tools. An agent file may come from
// someone else and is often committed: it holds no secret itself, and it cannot make keel send one to a host the
// command line did not name (see key-hosts.ts).
//
// - `env:` of an MCP server or a command tool is an allowlist: `NAME` passes keel's own value of NAME, if set;
//   `NAME=value` sets a literal, refused when NAME looks like a secret (`*_TOKEN`, `*_KEY`, `PASSWORD`, ...) or the
//   value looks like one: secrets come from the environment, by name.
// - A header value is a literal (placeholders allowed for HTTP tools), refused for a credential header
//   (`authorization`, `x-api-key`, `cookie`, ...) and for a value that looks like a secret; or
//   `{ env: NAME_API_KEY, prefix: "Bearer " }`: the value of an API key variable, sent only to a host that
//   `--allow-key-host` names.

/** A variable passed to a program: keel's own value of `name`, or the literal `value`. */
export interface EnvEntry {
  name: string;
  /** A literal the file sets; absent when the value comes from keel's environment. */
  value?: string;
}

/** A request header: literal text, or the value of an environment variable after `prefix`. */
export type HeaderValue = { text: string } | { env: string; prefix: string };

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SECRET_WORD =
  /(^|[-_])(key|secret|token|password|passwd|pass|credentials?|auth|session|cookie|signature)([-_]|$)/i;
const NOT_SECRET_HEADERS = new Set(['idempotency-key']);

/** Whether a variable or header name usually holds a secret. */
export function namesSecret(name: string): boolean {
  if (NOT_SECRET_HEADERS.has(name.toLowerCase())) return false;
  return isSecretKey(name) || SECRET_WORD.test(name);
}

/** Whether a literal value looks like a credential (a provider key, a bearer token, a JWT, ...). */
function looksLikeSecret(value: string): boolean {
  return redactSecrets(value) !== value;
}

/** Reads an `env:` allowlist: `NAME` (from keel's environment) or `NAME=value` (a literal that is no secret). */
export function readEnvEntries(reader: FieldReader, map: YAMLMap, field: string): EnvEntry[] | undefined {
  const entries = reader.stringList(map, 'env', field, 'variable names (NAME, or NAME=value)', (text) => {
    const separator = text.indexOf('=');
    const name = separator === -1 ? text : text.slice(0, separator);
    if (!VARIABLE_NAME.test(name))
      return `must be a variable name, or NAME=value (got ${JSON.stringify(text)})`;
    if (separator === -1) return undefined;
    const value = text.slice(separator + 1);
    if (value.includes('\0')) return 'must not hold a NUL character';
    if (namesSecret(name) || looksLikeSecret(value)) {
      return `sets ${name} to a literal that looks like a secret; an agent file names secrets and does not hold them (write ${name} alone, and set it in keel's environment)`;
    }
    return undefined;
  });
  if (entries === undefined) return undefined;
  const seen = new Set<string>();
  return entries.map((text, index) => {
    const separator = text.indexOf('=');
    const name = separator === -1 ? text : text.slice(0, separator);
    if (seen.has(name)) {
      const list = map.get('env', true) as unknown as { items: Node[] };
      reader.fail(list.items[index], `${field}[${index}]`, `names ${name} a second time`);
    }
    seen.add(name);
    return separator === -1 ? { name } : { name, value: text.slice(separator + 1) };
  });
}

/** The variables of `entries` with their values: literals as they are, names from `environment` when set there. */
export function environmentOf(
  entries: readonly EnvEntry[],
  environment: NodeJS.ProcessEnv,
): Record<string, string> {
  const values: Record<string, string> = {};
  for (const entry of entries) {
    const value = entry.value ?? environment[entry.name];
    if (value !== undefined) values[entry.name] = value;
  }
  return values;
}

/**
 * Reads `headers:` for requests to `url` (undefined when the URL is not valid: the caller refuses it). Secret values
 * come from API key variables, for hosts `allowedKeyHosts` names.
 */
export function readHeaders(
  reader: FieldReader,
  map: YAMLMap,
  field: string,
  url: URL | undefined,
  allowedKeyHosts: readonly string[],
): Record<string, HeaderValue> | undefined {
  const headers = reader.mapping(map, 'headers', field);
  if (headers === undefined) return undefined;
  const result: Record<string, HeaderValue> = {};
  for (const pair of headers.items) {
    const name = isScalar(pair.key) ? String(pair.key.value).toLowerCase() : '';
    const headerField = `${field}.${name}`;
    const node = pair.value as Node | null;
    reader.locations[headerField] = reader.where(node ?? (pair.key as Node));
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
      reader.fail(pair.key as Node, headerField, 'is not a valid header name');
    if (name in result) reader.fail(pair.key as Node, headerField, 'is set a second time');
    if (isMap(node) && placeholderHint(node) === '') {
      result[name] = readSecretHeader(reader, node, headerField, url, allowedKeyHosts);
      continue;
    }
    if (!isScalar(node) || !['string', 'number'].includes(typeof node.value))
      return reader.fail(
        node,
        headerField,
        `must be text, or { env: NAME_API_KEY, prefix: "Bearer " }${placeholderHint(node)}`,
      );
    const text = String(node.value);
    if (/[\r\n\0]/.test(text)) reader.fail(node, headerField, 'must be text on one line');
    if (namesSecret(name) || looksLikeSecret(text)) {
      reader.fail(
        node,
        headerField,
        'holds a literal credential; an agent file names secrets and does not hold them',
        `Keep the secret in an API key variable and write ${name}: { env: NAME_API_KEY, prefix: "Bearer " }`,
      );
    }
    result[name] = { text };
  }
  return result;
}

function readSecretHeader(
  reader: FieldReader,
  node: YAMLMap,
  field: string,
  url: URL | undefined,
  allowedKeyHosts: readonly string[],
): HeaderValue {
  reader.rejectUnknownFields(node, ['env', 'prefix'], `${field}.`);
  const variable = reader.string(node, 'env', `${field}.env`, true)!;
  if (!API_KEY_VARIABLE.test(variable)) {
    reader.fail(
      node.get('env', true) as Node,
      `${field}.env`,
      `must name an API key variable, upper case and ending in _API_KEY or _API_TOKEN (got ${variable})`,
      'An agent file may make keel send only API key variables, such as TRACKER_API_TOKEN',
    );
  }
  const prefixNode = reader.node(node, 'prefix', `${field}.prefix`);
  let prefix = '';
  if (prefixNode !== undefined) {
    if (!isScalar(prefixNode) || typeof prefixNode.value !== 'string' || /[\r\n\0]/.test(prefixNode.value))
      reader.fail(prefixNode, `${field}.prefix`, 'must be text on one line, such as "Bearer "');
    prefix = prefixNode.value as string;
  }
  if (url !== undefined && !urlHostAllowed(url, allowedKeyHosts)) {
    reader.fail(
      node,
      field,
      `would send the value of ${variable} to ${url.host}, which --allow-key-host does not name`,
      `If you trust ${url.host} with that key, run with --allow-key-host ${url.host}`,
    );
  }
  return { env: variable, prefix };
}

/**
 * The header values to send: literals as they are, secrets from `environment`. An unset variable is refused at the
 * field that names it (`locations` from the agent file).
 */
export function headerValuesOf(
  headers: Readonly<Record<string, HeaderValue>>,
  environment: NodeJS.ProcessEnv,
  where: (name: string) => { location: string; field: string; file: string },
): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, header] of Object.entries(headers)) {
    if ('text' in header) {
      values[name] = header.text;
      continue;
    }
    const value = environment[header.env];
    if (value === undefined || value === '') {
      const { location, field, file } = where(name);
      throw new KeelError(
        'config.invalid',
        `${location}: ${field} needs the environment variable ${header.env}, which is not set`,
        { data: { file, field, variable: header.env }, guidance: `Set ${header.env}` },
      );
    }
    values[name] = `${header.prefix}${value}`;
  }
  return values;
}
