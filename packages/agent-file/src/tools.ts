import { closestName } from '@keel/core/adapter';
import { isMap, isScalar, isSeq, type Node } from 'yaml';
import { type AgentEntry, type ChildFileLoader, readAgentEntry } from './agents.js';
import { type CommandEntry, readCommandEntry } from './command.js';
import { type HttpEntry, readHttpEntry } from './http.js';
import { type McpEntry, readMcpEntry } from './mcp.js';
import type { FieldReader } from './reader.js';
import type { ToolEntryContext } from './tool-fields.js';

/** A built-in tool an agent file lists by name. */
export interface BuiltinEntry {
  kind: 'builtin';
  name: string;
  /** Its field, such as `tools[0]`. */
  field: string;
}

/** One entry of an agent file's `tools:` list. */
export type ToolEntry = BuiltinEntry | McpEntry | CommandEntry | HttpEntry | AgentEntry;

const KINDS = ['mcp', 'command', 'http', 'agent'] as const;

/**
 * Reads `tools:`: built-in names, and single-key mappings `mcp:`, `command:` or `http:`. Each entry is checked as far
 * as the factory that will build it checks it (`commandTool` and `httpTool` are called once, their refusals located at
 * the field they name; `mcp:` entries are checked as `mcpTools` checks its options), so that a file accepted here
 * builds.
 */
export function readTools(
  reader: FieldReader,
  node: Node,
  knownTools: readonly string[],
  context: ToolEntryContext,
  loadChild?: ChildFileLoader,
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
  // Each entry is read on its own: a mistake in one is recorded, and the next entry read.
  for (const [index, item] of node.items.entries()) reader.attempt(() => readEntry(item as Node, index));
  return entries;

  function readEntry(entryNode: Node, index: number): void {
    const field = `tools[${index}]`;
    reader.locations[field] = reader.where(entryNode);
    if (isScalar(entryNode) && typeof entryNode.value === 'string') {
      const name = entryNode.value;
      if (!knownTools.includes(name)) {
        const meant = closestName(name, knownTools);
        reader.fail(
          entryNode,
          field,
          `names an unknown tool "${name}" (${meant === undefined ? '' : `did you mean ${meant}? `}built-in tools: ${knownTools.join(', ')}; or declare one with mcp:, command: or http:)`,
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
        'must be a built-in tool name, or a mapping with one key: mcp, command, http or agent',
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
    if (kind === 'agent' && body !== undefined && loadChild !== undefined) {
      const entry = readAgentEntry(reader, body, bodyField, loadChild);
      claim(names, entry.name, body, `${bodyField}`);
      entries.push({ ...entry, field });
      return;
    }
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
  }
}
