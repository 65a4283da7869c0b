import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  type Clock,
  type JsonSchemaInput,
  type JsonValue,
  KeelError,
  type SchemaLike,
  systemClock,
  type Tool,
  type ToolContext,
  type ToolFallback,
  tool,
} from '@keel/core';
import {
  MAX_TIMER_MS,
  optionError,
  rejectUnknownOptions,
  requireBoolean,
  requireClock,
  requireInteger,
  requireOptionsObject,
} from '@keel/core/adapter';
import { checkPlaceholderNames } from '../template.js';
import { stringRecordOption } from '../validate.js';
import { buildArguments, type CommandTemplate, parseCommand } from './argv.js';
import { confinePath, resolveDirectories } from './confine-path.js';
import { commandEnvironment, DEFAULT_INHERITED_ENV, isVariableName } from './environment.js';
import { findProgram } from './find-program.js';
import type { OutputCapture } from './output-capture.js';
import { limitWrapper, type ResourceLimits } from './resource-limits.js';
import { type CommandUser, type ProcessOutcome, runProcess } from './run-process.js';

/** Options of {@link commandTool}. */
export interface CommandToolOptions<Input> {
  /** Sent to the model; 1 to 64 letters, digits, `_` or `-`. Required. */
  name: string;
  /** Tells the model what the command does. Required. */
  description: string;
  /** The input's schema (zod 4 or JSON Schema, top level an object); placeholders name its properties. Required. */
  input: SchemaLike<Input>;
  /** The JSON Schema sent to the model, when `input` is a library schema that cannot produce one. Defaults to derived. */
  inputJsonSchema?: JsonSchemaInput;
  /**
   * The program and its arguments, such as `['git', 'log', '-n', '{count}', '--', '{file:path}']`. `command[0]` is
   * fixed; each later element is one argument whatever its value holds (no shell). Placeholders:
   * - `{name}`: the input's `name` as text. At the start of an argument, a value starting with `-` is refused (it
   *   would be read as an option), unless a literal `--` came earlier in the command.
   * - `{name:allow-dash}`: the same, a leading `-` allowed (for an option's own value, such as `-e {pattern}`).
   * - `{name:path}`: a path confined below `root` (no `..`, absolute path or symbolic link escape), passed as the real
   *   absolute path.
   * Placeholders may share an argument with text (`--max-count={count}`): the value stays inside that one argument.
   * An inner array is an optional group, left out when one of its placeholders has no value
   * (`['--author', '{author}']`). `{{` and `}}` are literal braces. Required.
   */
  command: CommandTemplate;
  /**
   * The directory path slots are confined to, and `cwd` must be in. Defaults to `cwd`, or to keel's working
   * directory when neither is set.
   */
  root?: string;
  /** The program's working directory, absolute or relative to `root`; must be inside `root`. Defaults to `root`. */
  cwd?: string;
  /** Variables set for the program, on top of the inherited ones. Defaults to `{}`. */
  env?: Record<string, string>;
  /**
   * Names of variables copied from keel's environment when set there. Defaults to {@link DEFAULT_INHERITED_ENV}
   * (PATH, HOME, USER, LOGNAME, LANG, LANGUAGE, LC_ALL, LC_CTYPE, LC_MESSAGES, TZ, TMPDIR, TERM): secrets are not
   * inherited unless listed here.
   */
  inheritEnv?: readonly string[];
  /** Longest the program may run, in milliseconds; then its whole process group is ended. Defaults to 30_000. */
  timeoutMs?: number;
  /** Wait between SIGTERM and SIGKILL when the program is ended, in milliseconds. Defaults to 2_000. */
  killGraceMs?: number;
  /**
   * Most bytes kept of stdout (its start) and of stderr (its end), each; the rest is read, counted and dropped, and
   * the result says so. Defaults to 65_536.
   */
  maxOutputBytes?: number;
  /** Exit codes that mean success (such as `[0, 1]` for grep, where 1 is "no match"). Defaults to `[0]`. */
  successExitCodes?: readonly number[];
  /** Kernel resource limits, applied through util-linux `prlimit`. Defaults to none. See {@link ResourceLimits}. */
  limits?: ResourceLimits;
  /** Run the program as this user and group ID (keel must run as root to switch). Defaults to keel's own. */
  user?: CommandUser;
  /** Whether running the command twice with the same input is harmless. Defaults to false. */
  idempotent?: boolean;
  /** Whether a human must approve each call (or a function deciding per input). Defaults to false. */
  needsApproval?: boolean | ((input: Input) => boolean | Promise<boolean>);
  /** What answers when a call fails: another tool or a degraded value (see core's `tool()`). Defaults to none. */
  fallbacks?: readonly ToolFallback<Input>[];
  /** Where the timeout and kill grace get time from. Defaults to the system clock. */
  clock?: Clock;
}

/** What a successful command returns to the model. */
export interface CommandOutput {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** Present when output was cut: says what was dropped. */
  notes?: string[];
}

const OPTION_NAMES = [
  'name',
  'description',
  'input',
  'inputJsonSchema',
  'command',
  'root',
  'cwd',
  'env',
  'inheritEnv',
  'timeoutMs',
  'killGraceMs',
  'maxOutputBytes',
  'successExitCodes',
  'limits',
  'user',
  'idempotent',
  'needsApproval',
  'fallbacks',
  'clock',
] as const;

/** How much stdout and stderr an error's data carries, in characters: the model reads it, within its result cap. */
const ERROR_EXCERPT_CHARS = 4_000;

/**
 * A tool that runs a program with arguments filled from the validated input, never through a shell: an argument
 * such as `; rm -rf /` reaches the program as that one literal argument. The working directory and path arguments
 * are confined below `root`; the environment is an allowlist; the program runs in its own process group, ended
 * as a whole on timeout or cancellation (SIGTERM, then SIGKILL); output is capped; exit codes outside
 * `successExitCodes` fail the call as `tool.failed` with the stderr tail as data; optional kernel limits apply.
 *
 * The tool's `timeoutMs` (the agent's backstop) is this timeout plus the kill grace and one second, so that the
 * command's own timeout, which reports partial output, fires first.
 *
 * @example
 *   const gitLog = commandTool({
 *     name: 'git_log',
 *     description: 'Recent commits of the repository',
 *     input: z.object({ count: z.number().int().min(1).max(50), file: z.string().optional() }),
 *     command: ['git', 'log', '--oneline', '-n', '{count}', '--', ['{file:path}']],
 *     root: '/srv/repo',
 *     idempotent: true,
 *   });
 */
export function commandTool<Input = unknown>(options: CommandToolOptions<Input>): Tool<Input, CommandOutput> {
  requireOptionsObject(options, {
    where: 'commandTool',
    example: "{ name, description, input, command: ['git', 'status'] }",
  });
  rejectUnknownOptions(options, OPTION_NAMES, { where: 'commandTool' });
  const where = `commandTool "${String(options.name)}"`;
  const parsed = parseCommand(options.command, where);
  const root = resolve(options.root ?? options.cwd ?? process.cwd());
  const cwd = resolve(root, options.cwd ?? '.');
  requireDirectory(root, 'root', where);
  requireDirectory(cwd, 'cwd', where);
  const set = stringRecordOption(options.env, { where, option: 'env', checkKey: isVariableName });
  const inherit = inheritOption(options.inheritEnv, where);
  const timeoutMs = requireInteger(options.timeoutMs, {
    where: where,
    option: 'timeoutMs',
    min: 1,
    max: MAX_TIMER_MS,
    default: 30_000,
  });
  const killGraceMs = requireInteger(options.killGraceMs, {
    where: where,
    option: 'killGraceMs',
    min: 0,
    max: MAX_TIMER_MS,
    default: 2_000,
  });
  const maxOutputBytes = requireInteger(options.maxOutputBytes, {
    where: where,
    option: 'maxOutputBytes',
    min: 1,
    default: 65_536,
  });
  const successExitCodes = exitCodesOption(options.successExitCodes, where);
  const user = userOption(options.user, where);
  const runsAsRoot = (user?.uid ?? process.getuid?.() ?? -1) === 0;
  const wrapper = limitWrapper(options.limits, where, runsAsRoot);
  const idempotent = requireBoolean(options.idempotent, {
    where: where,
    option: 'idempotent',
    default: false,
  });
  const clock = requireClock(options.clock, { where: where, option: 'clock', default: systemClock });
  const programName = parsed.program;

  const execute = async (input: Input, context: ToolContext): Promise<CommandOutput> => {
    const { signal } = context;
    const { realRoot, realCwd } = await resolveDirectories(root, cwd, options.name);
    const environment = commandEnvironment(process.env, inherit, set);
    const argv = await buildArguments(parsed, input, (value, field) =>
      confinePath(value, field, realRoot, realCwd),
    );
    const file = await findProgram(programName, environment.PATH, realCwd, options.name);
    if (signal.aborted) throw signal.reason;
    let outcome: ProcessOutcome;
    try {
      outcome = await runProcess({
        file: wrapper === undefined ? file : wrapper.prlimit,
        args: wrapper === undefined ? argv : [...wrapper.arguments, '--', file, ...argv],
        cwd: realCwd,
        env: environment,
        user,
        timeoutMs,
        killGraceMs,
        maxOutputBytes,
        signal,
        clock,
      });
    } catch (error) {
      throw startFailure(error, programName, options.name);
    }
    if (outcome.endedBy === 'abort') throw signal.reason;
    return outputOf(outcome, programName, options.name, {
      timeoutMs,
      successExitCodes,
      limited: wrapper !== undefined,
    });
  };

  const built = tool<Input, CommandOutput>({
    name: options.name,
    description: options.description,
    input: options.input,
    inputJsonSchema: options.inputJsonSchema,
    idempotent,
    timeoutMs: Math.min(MAX_TIMER_MS, timeoutMs + killGraceMs + 1_000),
    needsApproval: options.needsApproval,
    fallbacks: options.fallbacks,
    execute,
  });
  checkPlaceholderNames(parsed.placeholders, built.inputSchema, where);
  return built;
}

function outputOf(
  outcome: ProcessOutcome,
  program: string,
  toolName: string,
  settings: { timeoutMs: number; successExitCodes: readonly number[]; limited: boolean },
): CommandOutput {
  const notes = [outcome.stdout.note('stdout'), outcome.stderr.note('stderr')].filter(
    (note): note is string => note !== undefined,
  );
  if (outcome.pipesClosedByKeel) {
    notes.push(
      'A process the program started outside its process group kept the output open; keel closed it.',
    );
  }
  const data = (): Record<string, JsonValue> => ({
    stdout: head(outcome.stdout),
    stderr: tail(outcome.stderr),
    ...(notes.length === 0 ? {} : { notes }),
  });
  if (outcome.endedBy === 'timeout') {
    throw new KeelError(
      'tool.timeout',
      `${program} did not finish within ${settings.timeoutMs} ms; keel ended its process group`,
      { provider: toolName, data: { timeoutMs: settings.timeoutMs, ...data() } },
    );
  }
  if (outcome.exitSignal !== null) {
    const hint = settings.limited ? ' (a resource limit of this tool may have been reached)' : '';
    throw new KeelError('tool.failed', `${program} was ended by ${outcome.exitSignal}${hint}`, {
      provider: toolName,
      data: { signal: outcome.exitSignal, ...data() },
    });
  }
  const exitCode = outcome.exitCode ?? -1;
  if (!settings.successExitCodes.includes(exitCode)) {
    throw new KeelError('tool.failed', `${program} exited with code ${exitCode}`, {
      provider: toolName,
      data: { exitCode, ...data() },
    });
  }
  const output: CommandOutput = { exitCode, stdout: outcome.stdout.text(), stderr: outcome.stderr.text() };
  if (notes.length > 0) output.notes = notes;
  return output;
}

function head(capture: OutputCapture): string {
  const text = capture.text();
  return text.length <= ERROR_EXCERPT_CHARS ? text : `${text.slice(0, ERROR_EXCERPT_CHARS)}…`;
}

function tail(capture: OutputCapture): string {
  const text = capture.text();
  return text.length <= ERROR_EXCERPT_CHARS ? text : `…${text.slice(-ERROR_EXCERPT_CHARS)}`;
}

/** A program that could not be started: missing rights are `tool.permission_denied`, the rest `tool.unavailable`. */
function startFailure(error: unknown, program: string, toolName: string): KeelError {
  const code = String((error as { code?: unknown }).code ?? 'unknown');
  const denied = code === 'EACCES' || code === 'EPERM';
  return new KeelError(
    denied ? 'tool.permission_denied' : 'tool.unavailable',
    `Tool "${toolName}" could not start ${program} (${code})`,
    { retryable: false, provider: toolName, data: { program, systemCode: code }, cause: error },
  );
}

function requireDirectory(path: string, option: string, where: string): void {
  let directory = false;
  try {
    directory = statSync(path).isDirectory();
  } catch {
    directory = false;
  }
  if (!directory)
    throw optionError({
      where: where,
      option: option,
      message: `${option} ${path} is not an existing directory`,
    });
}

function inheritOption(value: unknown, where: string): readonly string[] {
  if (value === undefined) return DEFAULT_INHERITED_ENV;
  if (!Array.isArray(value) || !value.every((name) => typeof name === 'string' && isVariableName(name))) {
    throw optionError({
      where: where,
      option: 'inheritEnv',
      message: "inheritEnv must be an array of variable names such as ['PATH', 'HOME']",
    });
  }
  return [...value];
}

function exitCodesOption(value: unknown, where: string): readonly number[] {
  if (value === undefined) return [0];
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    !value.every((code) => Number.isInteger(code) && code >= 0 && code <= 255)
  ) {
    throw optionError({
      where: where,
      option: 'successExitCodes',
      message: 'successExitCodes must be a non-empty array of exit codes from 0 to 255',
    });
  }
  return [...value];
}

function userOption(value: unknown, where: string): CommandUser | undefined {
  if (value === undefined) return undefined;
  const user = value as Partial<CommandUser> | null;
  const isId = (id: unknown) => typeof id === 'number' && Number.isInteger(id) && id >= 0;
  if (typeof user !== 'object' || user === null || !isId(user.uid) || !isId(user.gid)) {
    throw optionError({
      where: where,
      option: 'user',
      message: 'user must be { uid, gid } with non-negative integer IDs, such as { uid: 65534, gid: 65534 }',
    });
  }
  return { uid: user.uid!, gid: user.gid! };
}
