// What the declared tool entries of an agent file (`command:`, `http:`, `mcp:`) have in common: their shared fields,
// and locating the refusals of the factory that builds them.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { type JsonSchemaInput, KeelError, TOOL_NAME_PATTERN } from '@keel/core';
import { isMap, isScalar, isSeq, type Node, type YAMLMap } from 'yaml';
import type { FieldReader } from './reader.js';

/** What reading a tool entry needs besides its node. */
export interface ToolEntryContext {
  /** The agent file's directory: relative `cwd` and paths start there. */
  directory: string;
  /** Hosts that may receive a secret header (`--allow-key-host`). */
  allowedKeyHosts: readonly string[];
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
