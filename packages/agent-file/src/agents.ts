// Agent files that name other agent files: `tools: - agent: ./research.yaml` (an agent as a tool) and
// `handoffs: - ./support.yaml`. Each file named is read and checked as a whole agent file, with the same consent:
// a child file can do no more than the person running keel allowed for the parent.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { KeelError } from '@keel/core';
import { TOOL_NAME_PATTERN } from '@keel/core/adapter';
import { isMap, isScalar, isSeq, type Node } from 'yaml';
import type { AgentFile } from './agent-file.js';
import type { FieldReader } from './reader.js';

/** An agent file listed as a tool (`tools: - agent: ./research.yaml`): the agent runs as a child run for each call. */
export interface AgentEntry {
  kind: 'agent';
  /** The tool's name: `name`, or the child file's name (characters other than letters, digits, `_`, `-` as `_`). */
  name: string;
  /** Defaults to `Hands a task to the agent <name>, who answers with its result`. */
  description: string;
  /** The child agent file, read and checked. */
  file: AgentFile;
  /** Its field, such as `tools[2]`. */
  field: string;
}

/** An agent file the agent may hand the conversation over to (`handoffs: - ./support.yaml`). */
export interface HandoffEntry {
  file: AgentFile;
  /** Its field, such as `handoffs[0]`. */
  field: string;
}

/** Reads a child agent file, with the consent the parent was read with; `ancestors` guards against loops. */
export type ChildFileLoader = (relativePath: string, at: Node, field: string) => AgentFile;

/** The deepest agent files may nest (a file naming a file naming a file ...). */
const MAX_DEPTH = 8;

/**
 * A loader of child files for the agent file at `path`. A child is parsed by `parse` (the same known tools and
 * consent); a refusal of the child is recorded at the parent's field, with the child's own lines. A file that names
 * itself, directly or not, or nests deeper than 8 files, is refused.
 */
export function childFileLoader(
  reader: FieldReader,
  path: string,
  ancestors: readonly string[],
  parse: (text: string, childPath: string, ancestors: readonly string[]) => AgentFile,
): ChildFileLoader {
  const self = resolve(path);
  return (relativePath, at, field) => {
    const childPath = resolve(dirname(self), relativePath);
    const chain = [...ancestors, self];
    if (chain.includes(childPath))
      reader.fail(
        at,
        field,
        `names ${relativePath}, which includes this file again (agent files cannot loop)`,
      );
    if (chain.length >= MAX_DEPTH) reader.fail(at, field, `nests agent files deeper than ${MAX_DEPTH} files`);
    let text: string;
    try {
      text = readFileSync(childPath, 'utf8');
    } catch (error) {
      return reader.fail(at, field, `cannot read the agent file ${childPath}: ${(error as Error).message}`);
    }
    try {
      return parse(text, childPath, chain);
    } catch (error) {
      if (!KeelError.isInstance(error)) throw error;
      return reader.fail(
        at,
        field,
        `names the agent file ${relativePath}, which is refused: ${error.message}`,
      );
    }
  };
}

/** Reads a `tools:` entry `agent: ./child.yaml`, or `agent: { file, name, description }`. */
export function readAgentEntry(
  reader: FieldReader,
  body: Node,
  field: string,
  loadChild: ChildFileLoader,
): AgentEntry {
  let filePath: string | undefined;
  let name: string | undefined;
  let description: string | undefined;
  if (isScalar(body) && typeof body.value === 'string') filePath = body.value;
  else if (isMap(body)) {
    reader.rejectUnknownFields(body, ['file', 'name', 'description'], `${field}.`);
    filePath = reader.string(body, 'file', `${field}.file`, true);
    name = reader.string(body, 'name', `${field}.name`, false);
    description = reader.string(body, 'description', `${field}.description`, false);
  } else {
    reader.fail(
      body,
      field,
      'must be the path of an agent file (agent: ./research.yaml), or { file, name, description }',
    );
  }
  if (filePath === undefined || filePath.trim() === '') reader.fail(body, field, 'must name an agent file');
  const file = loadChild(filePath, body, field);
  const toolName = name ?? file.name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
  if (!TOOL_NAME_PATTERN.test(toolName))
    reader.fail(
      body,
      `${field}.name`,
      `must be 1 to 64 letters, digits, "_" or "-" (got ${JSON.stringify(toolName)})`,
    );
  return {
    kind: 'agent',
    name: toolName,
    description: description ?? `Hands a task to the agent ${file.name}, who answers with its result`,
    file,
    field,
  };
}

/** Reads `handoffs:`: a list of agent file paths. */
export function readHandoffs(reader: FieldReader, node: Node, loadChild: ChildFileLoader): HandoffEntry[] {
  if (!isSeq(node))
    return reader.fail(node, 'handoffs', 'must be a list of agent file paths (- ./support.yaml)');
  const entries: HandoffEntry[] = [];
  for (const [index, item] of node.items.entries()) {
    reader.attempt(() => {
      const field = `handoffs[${index}]`;
      reader.locations[field] = reader.where(item as Node);
      if (!isScalar(item) || typeof item.value !== 'string' || item.value.trim() === '')
        reader.fail(item as Node, field, 'must be the path of an agent file, such as ./support.yaml');
      entries.push({ file: loadChild(item.value as string, item as Node, field), field });
    });
  }
  return entries;
}
