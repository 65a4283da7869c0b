// What the declared tool entries of an agent file (`command:`, `http:`, `mcp:`) have in common: their shared fields,
// and locating the refusals of the factory that builds them.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { type JsonSchemaInput, KeelError } from '@keel/core';
import { type OptionPath, optionErrorData, TOOL_NAME_PATTERN } from '@keel/core/adapter';
import { isMap, isSeq, type Node, type YAMLMap } from 'yaml';
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
 * refusal's data says where (`{ where, option, path }` from the option kit: `path` is the option's place in the
 * factory's options, such as `['command', 2]`); `fieldOf` turns that into a key path in `map` (such as
 * `['argv', 2]`), by default the same path. Messages are never read to find the field.
 */
export function probe(
  reader: FieldReader,
  map: YAMLMap,
  field: string,
  build: () => unknown,
  fieldOf: (path: OptionPath) => OptionPath = (path) => path,
): void {
  try {
    build();
  } catch (error) {
    const keelError = KeelError.isInstance(error) ? error : undefined;
    const data = optionErrorData(error);
    let message = keelError?.message ?? String(error);
    if (data !== undefined && message.startsWith(`${data.where}: `))
      message = message.slice(data.where.length + 2);
    let at: Node = map;
    let located = '';
    for (const part of data === undefined ? [] : fieldOf(data.path)) {
      const parent: Node = at;
      const next: Node | undefined =
        isMap(parent) || isSeq(parent)
          ? (parent.get(isSeq(parent) ? Number(part) : part, true) as Node | undefined)
          : undefined;
      if (next === undefined) break;
      located += isSeq(parent) ? `[${part}]` : `.${part}`;
      at = next;
    }
    reader.fail(at, `${field}${located}`, `is refused: ${message}`, keelError?.guidance);
  }
}
