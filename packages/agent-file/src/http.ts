import { type HttpMethod, type HttpToolOptions, httpTool } from '@keel/tools';
import { isScalar, type Node, type YAMLMap } from 'yaml';
import { type FieldReader, placeholderHint } from './reader.js';
import { type HeaderValue, headerValuesOf, readHeaders } from './secrets.js';
import { type DeclaredTool, probe, readDeclaredTool, type ToolEntryContext } from './tool-fields.js';

/** An `http:` entry: one HTTP endpoint, its URL, query, headers and JSON body filled from the model's input. */
export interface HttpEntry extends DeclaredTool {
  kind: 'http';
  /** Its field, such as `tools[3].http`. */
  field: string;
  method?: HttpMethod;
  url: string;
  query?: Record<string, string>;
  headers: Record<string, HeaderValue>;
  body?: unknown;
  maxResponseBytes?: number;
  maxRedirects?: number;
  /** Internal hosts and ranges the SSRF guard lets through. */
  allow?: string[];
}

const FIELDS = [
  'name',
  'description',
  'input',
  'method',
  'url',
  'query',
  'headers',
  'body',
  'timeoutMs',
  'maxResponseBytes',
  'maxRedirects',
  'allow',
  'idempotent',
  'needsApproval',
] as const;
const METHODS: readonly HttpMethod[] = ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE'];
/** Stands in for secret header values when a tool is made only to check it. */
const PROBE_VALUES: NodeJS.ProcessEnv = new Proxy({}, { get: () => 'probe' });

/** Reads an `http:` entry at `field`, and makes the tool once to check it. */
export function readHttpEntry(
  reader: FieldReader,
  map: YAMLMap,
  field: string,
  context: ToolEntryContext,
): HttpEntry {
  reader.rejectUnknownFields(map, FIELDS, `${field}.`);
  const declared = readDeclaredTool(reader, map, field);
  const url = reader.string(map, 'url', `${field}.url`, true)!;
  const parsedUrl = URL.canParse(url) ? new URL(url) : undefined;
  const entry: HttpEntry = {
    kind: 'http',
    field,
    ...declared,
    url,
    headers: readHeaders(reader, map, `${field}.headers`, parsedUrl, context.allowedKeyHosts) ?? {},
  };
  const method = reader.string(map, 'method', `${field}.method`, false);
  if (method !== undefined) {
    if (!METHODS.includes(method.toUpperCase() as HttpMethod))
      reader.fail(map.get('method', true) as Node, `${field}.method`, `must be one of ${METHODS.join(', ')}`);
    entry.method = method.toUpperCase() as HttpMethod;
  }
  const query = reader.mapping(map, 'query', `${field}.query`);
  if (query !== undefined) {
    entry.query = {};
    for (const pair of query.items) {
      const name = isScalar(pair.key) ? String(pair.key.value) : '';
      const node = pair.value as Node | null;
      if (!isScalar(node) || !['string', 'number', 'boolean'].includes(typeof node.value))
        reader.fail(
          node ?? (pair.key as Node),
          `${field}.query.${name}`,
          `must be text${placeholderHint(node)}`,
        );
      entry.query[name] = String(node.value);
    }
  }
  const body = reader.node(map, 'body', `${field}.body`);
  if (body !== undefined) entry.body = reader.value(body);
  const maxResponseBytes = reader.integer(
    map,
    'maxResponseBytes',
    `${field}.maxResponseBytes`,
    1,
    1_073_741_824,
  );
  if (maxResponseBytes !== undefined) entry.maxResponseBytes = maxResponseBytes;
  const maxRedirects = reader.integer(map, 'maxRedirects', `${field}.maxRedirects`, 0, 20);
  if (maxRedirects !== undefined) entry.maxRedirects = maxRedirects;
  const allow = reader.stringList(map, 'allow', `${field}.allow`, 'host names and address ranges');
  if (allow !== undefined) entry.allow = allow;
  probe(reader, map, field, () =>
    httpTool(
      httpToolOptions(entry, PROBE_VALUES, () => {
        throw new Error('unreachable: every variable has a value while probing');
      }),
    ),
  );
  return entry;
}

/**
 * `httpTool`'s options for an entry; secret headers take their values from `environment` (an unset one is refused
 * where `locate` says the header is).
 */
export function httpToolOptions(
  entry: HttpEntry,
  environment: NodeJS.ProcessEnv,
  locate: (name: string) => { location: string; field: string; file: string },
): HttpToolOptions<unknown> {
  const options: HttpToolOptions<unknown> = {
    name: entry.name,
    description: entry.description,
    input: entry.input,
    url: entry.url,
    headers: headerValuesOf(entry.headers, environment, locate),
  };
  if (entry.method !== undefined) options.method = entry.method;
  if (entry.query !== undefined) options.query = entry.query;
  if (entry.body !== undefined) options.body = entry.body;
  if (entry.timeoutMs !== undefined) options.timeoutMs = entry.timeoutMs;
  if (entry.maxResponseBytes !== undefined) options.maxResponseBytes = entry.maxResponseBytes;
  if (entry.maxRedirects !== undefined) options.maxRedirects = entry.maxRedirects;
  if (entry.allow !== undefined) options.allow = entry.allow;
  if (entry.idempotent !== undefined) options.idempotent = entry.idempotent;
  if (entry.needsApproval !== undefined) options.needsApproval = entry.needsApproval;
  return options;
}

// The loader's field list, for the agent-file reference (fields.ts).
export { FIELDS };
