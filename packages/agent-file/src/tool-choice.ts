import type { ToolChoice } from '@keel/core/adapter';
import { isMap, isScalar, type Node } from 'yaml';
import type { FieldReader } from './reader.js';
import type { ToolEntry } from './tools.js';

const CHOICES = ['auto', 'none', 'required'] as const;

/**
 * Reads `toolChoice:` (`auto`, `none`, `required`, or `{ name: <tool> }`), as `agent({ toolChoice })` takes it. A named
 * tool must be one the file lists (a built-in name, or a `command:`/`http:` entry's name) unless an `mcp:` server may
 * bring it; `required` needs a tool.
 */
export function readToolChoice(reader: FieldReader, node: Node, tools: readonly ToolEntry[]): ToolChoice {
  const field = 'toolChoice';
  const names = tools.flatMap((entry) =>
    'name' in entry && typeof entry.name === 'string' ? [entry.name] : [],
  );
  const sourced = tools.some((entry) => entry.kind === 'mcp');
  if (
    isScalar(node) &&
    typeof node.value === 'string' &&
    (CHOICES as readonly string[]).includes(node.value)
  ) {
    if (node.value === 'required' && names.length === 0 && !sourced)
      reader.fail(node, field, 'is required, but the file lists no tools');
    return node.value as ToolChoice;
  }
  if (!isMap(node)) {
    return reader.fail(node, field, 'must be auto, none, required, or a mapping such as { name: read_file }');
  }
  reader.rejectUnknownFields(node, ['name'], `${field}.`);
  const name = reader.string(node, 'name', `${field}.name`, true)!;
  if (!sourced && !names.includes(name)) {
    reader.fail(
      node.get('name', true) as Node,
      `${field}.name`,
      `names the tool "${name}", which the file does not list (${names.length === 0 ? 'it lists none' : `it lists ${names.join(', ')}`})`,
    );
  }
  return { name };
}
