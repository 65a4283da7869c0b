import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { type JsonSchemaInput, KeelError, TOOL_NAME_PATTERN } from '@keel/core';
import { isMap, isScalar, isSeq, type Node, type YAMLMap } from 'yaml';
import { type CommandEntry, readCommandEntry } from './agent-file-command.js';
import { type HttpEntry, readHttpEntry } from './agent-file-http.js';
import { type McpEntry, readMcpEntry } from './agent-file-mcp.js';
import type { FieldReader } from './agent-file-reader.js';

/** A built-in tool an agent file lists by name. */
export interface BuiltinEntry {
  kind: 'builtin';
  name: string;
  /** Its field, such as `tools[0]`. */
  field: string;
}

/** One entry of an agent file's `tools:` list. */
export type ToolEntry = BuiltinEntry | McpEntry | CommandEntry | HttpEntry;

/** What reading a tool entry needs besides its node. */
export interface ToolEntryContext {
  /** The agent file's directory: relative `cwd` and paths start there. */
  directory: string;
  /** Hosts that may receive a secret header (`--allow-key-host`). */
  allowedKeyHosts: readonly string[];
}

const KINDS = ['mcp', 'command', 'http'] as const;

/**
 * Reads `tools:`: built-in names, and single-key mappings `mcp:`, `command:` or `http:`. Each entry is checked as far
 * as the factory that will build it checks it (the factory is called once, its refusals located at the field they
 * name), so that a file accepted here builds.
 */
export function readTools(
  reader: FieldReader,
  node: Node,
  knownTools: readonly string[],
  context: ToolEntryContext,
): ToolEntry[] {
  if (!isSeq(node))
    return reader.fail(node, 'tools', 'must be a list of tool names, or mcp:, command: and http: entries');
  const entries: ToolEntry[] = [];
  const names = new Map<string, string>();
  const prefixes = new Map<string, string>();
  const claim = (claimed: Map<string, string>, name: string, at: Node, field: string) => {
    const earlier = claimed.get(name);
    if (earlier !== undefined) reader.fail(at, field, `names ${name} a second time (first at ${earlier})`);
    claimed.set(name, field);
  };
  node.items.forEach((item, index) => {
    const entryNode = item as Node;
    const field = `tools[${index}]`;
    reader.locations[field] = reader.where(entryNode);
    if (isScalar(entryNode) && typeof entryNode.value === 'string') {
      const name = entryNode.value;
      if (!knownTools.includes(name)) {
        reader.fail(
          entryNode,
          field,
          `names an unknown tool "${name}" (built-in tools: ${knownTools.join(', ')}; or declare one with mcp:, command: or http:)`,
        );
      }
      claim(names, name, entryNode, field);
      entries.push({ kind: 'builtin', name, field });
      return;
    }
    if (!isMap(entryNode) || entryNode.items.length !== 1) {
      reader.fail(
        entryNode,
        field,
        'must be a built-in tool name, or a mapping with one key: mcp, command or http',
      );
    }
    const [kind] = reader.keys(entryNode);
    if (!KINDS.includes(kind as (typeof KINDS)[number])) {
      reader.fail(
        entryNode.items[0]!.key as Node,
        `${field}.${kind}`,
        `is not a kind of tool entry (known: ${KINDS.join(', ')})`,
      );
    }
    const bodyField = `${field}.${kind}`;
    const body = reader.node(entryNode, kind!, bodyField);
    if (!isMap(body)) {
      reader.fail(body, bodyField, 'must be a mapping');
    }
    if (kind === 'mcp') {
      const entry = readMcpEntry(reader, body, bodyField, context);
      // Two servers with one prefix would offer tools of the same names.
      if (entry.prefix !== undefined)
        claim(prefixes, entry.prefix, body.get('prefix', true) as Node, `${bodyField}.prefix`);
      entries.push(entry);
      return;
    }
    const entry =
      kind === 'command'
        ? readCommandEntry(reader, body, bodyField, context)
        : readHttpEntry(reader, body, bodyField, context);
    claim(names, entry.name, body.get('name', true) as Node, `${bodyField}.name`);
    entries.push(entry);
  });
  return entries;
}

/** Reads `cwd` (relative to the agent file's directory, which is the default) as an existing directory's path. */
export function readWorkingDirectory(
  reader: FieldReader,
  map: YAMLMap,
  field: string,
  context: ToolEntryContext,
): string {
  const cwd = resolve(context.directory, reader.string(map, 'cwd', field, false) ?? '.');
  let directory = false;
  try {
    directory = statSync(cwd).isDirectory();
  } catch {
    // Missing or unreadable: refused below.
  }
  if (!directory) {
    reader.fail(
      (map.get('cwd', true) as Node | undefined) ?? map,
      field,
      `must be an existing directory (${cwd} is not one)`,
    );
  }
  return cwd;
}

/** The fields every declared tool has: its name, description and input schema (a JSON Schema object). */
export interface DeclaredTool {
  name: string;
  description: string;
  /** The JSON Schema of the input, as the file writes it. */
  input: JsonSchemaInput;
  timeoutMs?: number;
  idempotent?: boolean;
  needsApproval?: boolean;
}

/** Reads the fields every declared tool (`command:`, `http:`) has. */
export function readDeclaredTool(reader: FieldReader, map: YAMLMap, field: string): DeclaredTool {
  const name = reader.string(map, 'name', `${field}.name`, true)!;
  if (!TOOL_NAME_PATTERN.test(name)) {
    reader.fail(
      map.get('name', true) as Node,
      `${field}.name`,
      `must be 1 to 64 letters, digits, "_" or "-", such as git_log (got ${JSON.stringify(name)})`,
    );
  }
  const description = reader.string(map, 'description', `${field}.description`, true)!;
  const inputNode = reader.node(map, 'input', `${field}.input`);
  if (inputNode === undefined)
    return reader.fail(map, `${field}.input`, 'is required: the JSON Schema of the tool input');
  if (!isMap(inputNode)) {
    return reader.fail(
      inputNode,
      `${field}.input`,
      'must be a JSON Schema mapping, such as { type: object, properties: { count: { type: integer } } }',
    );
  }
  const input = reader.value(inputNode) as JsonSchemaInput;
  if (input.type !== 'object') {
    reader.fail(
      (inputNode.get('type', true) as Node | undefined) ?? inputNode,
      `${field}.input.type`,
      'must be object: tools take an object of named arguments',
    );
  }
  const declared: DeclaredTool = { name, description, input };
  const timeoutMs = reader.integer(map, 'timeoutMs', `${field}.timeoutMs`, 1, 2_147_483_647);
  if (timeoutMs !== undefined) declared.timeoutMs = timeoutMs;
  const idempotent = reader.boolean(map, 'idempotent', `${field}.idempotent`);
  if (idempotent !== undefined) declared.idempotent = idempotent;
  const needsApproval = reader.boolean(map, 'needsApproval', `${field}.needsApproval`);
  if (needsApproval !== undefined) declared.needsApproval = needsApproval;
  return declared;
}

/**
 * Builds the tool once with `build`, so that what its factory refuses is refused here, at the field it names. The
 * factory's `data.option` (`command`, `limits.cpuSeconds`, or a template's own label) and message go through
 * `fieldOf` to a key path in `map` (such as `argv.2`); by default an option that is a key path is used as it is.
 */
export function probe(
  reader: FieldReader,
  map: YAMLMap,
  field: string,
  build: () => unknown,
  fieldOf: (option: string | undefined, message: string) => string | undefined = () => undefined,
): void {
  try {
    build();
  } catch (error) {
    const keelError = KeelError.isInstance(error) ? error : undefined;
    const message = (keelError?.message ?? String(error)).replace(
      /^(commandTool|httpTool|mcpTools)( "[^"]*")?( limits)?: /,
      '',
    );
    const option = typeof keelError?.data.option === 'string' ? keelError.data.option : undefined;
    const key =
      fieldOf(option, message) ??
      (option !== undefined && /^[\w.]+$/.test(option) ? option : undefined) ??
      (/^tool "[^"]*" input|the JSON Schema/.test(message)
        ? 'input'
        : message.startsWith('tool name')
          ? 'name'
          : undefined);
    let at: Node = map;
    let located = '';
    if (key !== undefined) {
      // A JSON Schema refusal says where in the schema: `$.properties.count.maximum`.
      const schemaPath =
        typeof keelError?.data.path === 'string' && key === 'input' ? keelError.data.path : '$';
      const parts = [
        ...key.split('.'),
        ...[...schemaPath.matchAll(/\.([A-Za-z_$][\w$]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/g)].map(
          (match) => match[1] ?? match[2] ?? (JSON.parse(match[3]!) as string),
        ),
      ];
      let current: unknown = map;
      for (const part of parts) {
        const next =
          isMap(current) || isSeq(current)
            ? (current.get(isSeq(current) ? Number(part) : part, true) as Node | undefined)
            : undefined;
        if (next === undefined) break;
        current = next;
        located += isSeq(at) ? `[${part}]` : `.${part}`;
        at = next;
      }
    }
    reader.fail(at, `${field}${located}`, `is refused: ${message}`, keelError?.guidance);
  }
}

/** The key path (below `map`) of the first template field whose text holds the placeholder `{name`. */
export function placeholderField(map: YAMLMap, keys: readonly string[], message: string): string | undefined {
  const name = /placeholder \{([^}:]+)/.exec(message)?.[1];
  if (name === undefined) return undefined;
  const search = (node: unknown, path: string): string | undefined => {
    if (isScalar(node))
      return typeof node.value === 'string' && node.value.includes(`{${name}`) ? path : undefined;
    if (isSeq(node)) {
      for (const [index, item] of node.items.entries()) {
        const found = search(item, `${path}.${index}`);
        if (found !== undefined) return found;
      }
    }
    if (isMap(node)) {
      for (const pair of node.items) {
        const found = search(pair.value, `${path}.${isScalar(pair.key) ? String(pair.key.value) : ''}`);
        if (found !== undefined) return found;
      }
    }
    return undefined;
  };
  for (const key of keys) {
    const found = search(map.get(key, true), key);
    if (found !== undefined) return found;
  }
  return undefined;
}
