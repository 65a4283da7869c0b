import { type CommandTemplate, type CommandToolOptions, commandTool, type ResourceLimits } from '@keel/tools';
import { isScalar, isSeq, type Node, type YAMLMap } from 'yaml';
import { type FieldReader, placeholderHint } from './reader.js';
import { type EnvEntry, environmentOf, readEnvEntries } from './secrets.js';
import {
  type DeclaredTool,
  probe,
  readDeclaredTool,
  readWorkingDirectory,
  type ToolEntryContext,
} from './tool-fields.js';

/** A `command:` entry: a program run with arguments filled from the model's input, never through a shell. */
export interface CommandEntry extends DeclaredTool {
  kind: 'command';
  /** Its field, such as `tools[2].command`. */
  field: string;
  /** The program and its arguments (`commandTool`'s `command`). */
  argv: CommandTemplate;
  /** The working directory, absolute; `{name:path}` values are confined below it. */
  cwd: string;
  /** Variables added to the default set the program gets (PATH, HOME, LANG, ...). */
  env: EnvEntry[];
  maxOutputBytes?: number;
  successExitCodes?: number[];
  limits?: ResourceLimits;
}

const FIELDS = [
  'name',
  'description',
  'input',
  'argv',
  'cwd',
  'env',
  'timeoutMs',
  'maxOutputBytes',
  'successExitCodes',
  'limits',
  'idempotent',
  'needsApproval',
] as const;
const LIMITS = ['cpuSeconds', 'memoryBytes', 'openFiles', 'maxProcesses', 'fileSizeBytes'] as const;
/** Stands in for keel's environment when a tool is made only to check it. */
const NO_ENVIRONMENT: NodeJS.ProcessEnv = {};

/** Reads a `command:` entry at `field`, and makes the tool once to check it. */
export function readCommandEntry(
  reader: FieldReader,
  map: YAMLMap,
  field: string,
  context: ToolEntryContext,
): CommandEntry {
  reader.rejectUnknownFields(map, FIELDS, `${field}.`);
  const declared = readDeclaredTool(reader, map, field);
  const argvList = reader.list(map, 'argv', `${field}.argv`, 'arguments, the program first');
  if (argvList === undefined)
    return reader.fail(
      map,
      `${field}.argv`,
      'is required: the program and its arguments, such as [git, log]',
    );
  const argument = (node: Node, at: string): string => {
    if (isScalar(node) && ['string', 'number', 'boolean'].includes(typeof node.value))
      return String(node.value);
    return reader.fail(node, at, `must be a string${placeholderHint(node)}`);
  };
  const argv = argvList.items.map((item, index) => {
    const node = item as Node;
    const at = `${field}.argv[${index}]`;
    reader.locations[at] = reader.where(node);
    if (isSeq(node) && index > 0)
      return node.items.map((inner, position) => argument(inner as Node, `${at}[${position}]`));
    return argument(node, at);
  });
  const cwd = readWorkingDirectory(reader, map, `${field}.cwd`, context);
  const entry: CommandEntry = {
    kind: 'command',
    field,
    ...declared,
    argv,
    cwd,
    env: readEnvEntries(reader, map, `${field}.env`) ?? [],
  };
  const maxOutputBytes = reader.integer(map, 'maxOutputBytes', `${field}.maxOutputBytes`, 1, 1_073_741_824);
  if (maxOutputBytes !== undefined) entry.maxOutputBytes = maxOutputBytes;
  const codes = reader.list(map, 'successExitCodes', `${field}.successExitCodes`, 'exit codes');
  if (codes !== undefined) {
    entry.successExitCodes = codes.items.map((item, index) => {
      const node = item as Node;
      const value = isScalar(node) ? node.value : undefined;
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 255)
        return reader.fail(node, `${field}.successExitCodes[${index}]`, 'must be an exit code from 0 to 255');
      return value;
    });
  }
  const limitsMap = reader.mapping(map, 'limits', `${field}.limits`);
  if (limitsMap !== undefined) {
    reader.rejectUnknownFields(limitsMap, LIMITS, `${field}.limits.`);
    const limits: ResourceLimits = {};
    for (const key of LIMITS) {
      const value = reader.integer(limitsMap, key, `${field}.limits.${key}`, 0, Number.MAX_SAFE_INTEGER);
      if (value !== undefined) limits[key] = value;
    }
    entry.limits = limits;
  }
  probe(
    reader,
    map,
    field,
    () => commandTool(commandToolOptions(entry, NO_ENVIRONMENT)),
    // `root` is the tool's cwd (path arguments are confined below it); `command` is the file's `argv`.
    (path) => (path[0] === 'root' ? ['cwd'] : path[0] === 'command' ? ['argv', ...path.slice(1)] : path),
  );
  return entry;
}

/** `commandTool`'s options for an entry; variables the entry names take their values from `environment`. */
export function commandToolOptions(
  entry: CommandEntry,
  environment: NodeJS.ProcessEnv,
): CommandToolOptions<unknown> {
  const options: CommandToolOptions<unknown> = {
    name: entry.name,
    description: entry.description,
    input: entry.input,
    command: entry.argv,
    root: entry.cwd,
    cwd: entry.cwd,
    env: environmentOf(entry.env, environment),
  };
  if (entry.timeoutMs !== undefined) options.timeoutMs = entry.timeoutMs;
  if (entry.maxOutputBytes !== undefined) options.maxOutputBytes = entry.maxOutputBytes;
  if (entry.successExitCodes !== undefined) options.successExitCodes = entry.successExitCodes;
  if (entry.limits !== undefined) options.limits = entry.limits;
  if (entry.idempotent !== undefined) options.idempotent = entry.idempotent;
  if (entry.needsApproval !== undefined) options.needsApproval = entry.needsApproval;
  return options;
}

// The loader's field lists, for the agent-file reference (fields.ts).
export { FIELDS, LIMITS };
