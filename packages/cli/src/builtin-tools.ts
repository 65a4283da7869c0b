import { createHash } from 'node:crypto';
import { appendFile, mkdir, readFile, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { KeelError, type Tool, tool } from '@keel/core';
import { evaluateArithmetic } from './arithmetic.js';

/** Where the built-in tools may read and write. */
export interface BuiltinToolContext {
  /** `read_file` reads only below this directory (the agent file's). */
  filesDirectory: string;
  /** `create_ticket` appends its tickets here. */
  outboxPath: string;
}

const WEATHER = ['sunny', 'cloudy', 'light rain', 'windy', 'snow showers', 'clear skies'] as const;
const MAX_FILE_BYTES = 64 * 1024;

/** The names of the tools an agent file may list. */
export const BUILTIN_TOOL_NAMES = ['get_weather', 'calculator', 'read_file', 'create_ticket'] as const;

/** Builds the built-in tools an agent file may list by name. */
export function builtinTools(context: BuiltinToolContext): Map<string, Tool> {
  const tools: Tool[] = [
    tool({
      name: 'get_weather',
      description: 'Current weather for a city (a deterministic offline forecast).',
      input: {
        type: 'object',
        properties: { city: { type: 'string', minLength: 1, description: 'The city name, such as Paris' } },
        required: ['city'],
        additionalProperties: false,
      },
      idempotent: true,
      timeoutMs: 5_000,
      execute: (input) => {
        const { city } = input as { city: string };
        // The same city always gets the same forecast, however the model spells its case.
        const name = city.trim();
        const digest = createHash('sha256').update(name.toLowerCase()).digest();
        return {
          city: name,
          conditions: WEATHER[digest[0]! % WEATHER.length],
          temperatureC: (digest[1]! % 35) - 5,
        };
      },
    }),
    tool({
      name: 'calculator',
      description: 'Evaluates an arithmetic expression with + - * / % ^ and parentheses.',
      input: {
        type: 'object',
        properties: { expression: { type: 'string', minLength: 1, maxLength: 500 } },
        required: ['expression'],
        additionalProperties: false,
      },
      idempotent: true,
      execute: (input) => ({ value: evaluateArithmetic((input as { expression: string }).expression) }),
    }),
    tool({
      name: 'read_file',
      description: "Reads a text file below the agent file's directory (at most 64 KB).",
      input: {
        type: 'object',
        properties: {
          path: { type: 'string', minLength: 1, description: 'A path relative to the agent file' },
        },
        required: ['path'],
        additionalProperties: false,
      },
      idempotent: true,
      execute: async (input, { signal }) => {
        const path = await confine(context.filesDirectory, (input as { path: string }).path);
        const size = (await stat(path)).size;
        if (size > MAX_FILE_BYTES) {
          throw new KeelError(
            'tool.invalid_input',
            `The file is ${size} bytes; read_file reads at most ${MAX_FILE_BYTES}`,
          );
        }
        return {
          path: relative(context.filesDirectory, path),
          content: await readFile(path, { encoding: 'utf8', signal }),
        };
      },
    }),
    tool({
      name: 'create_ticket',
      description: 'Opens a support ticket (a side effect: not idempotent). Urgent tickets need approval.',
      input: {
        type: 'object',
        properties: {
          title: { type: 'string', minLength: 1, maxLength: 200 },
          priority: { type: 'string', enum: ['low', 'normal', 'urgent'] },
        },
        required: ['title'],
        additionalProperties: false,
      },
      idempotent: false,
      needsApproval: (input) => (input as { priority?: string }).priority === 'urgent',
      execute: async (input, { idempotencyKey }) => {
        const { title, priority = 'normal' } = input as { title: string; priority?: string };
        await mkdir(join(context.outboxPath, '..'), { recursive: true });
        await appendFile(context.outboxPath, `${JSON.stringify({ idempotencyKey, title, priority })}\n`);
        return {
          ticket: `T-${createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 8)}`,
          title,
          priority,
        };
      },
    }),
  ];
  return new Map(tools.map((item) => [item.name, item]));
}

/** Resolves `requested` inside `root`, refusing absolute paths, `..` escapes and symbolic links that leave it. */
async function confine(root: string, requested: string): Promise<string> {
  if (requested.includes('\0')) throw new KeelError('tool.invalid_input', 'The path contains a NUL byte');
  if (isAbsolute(requested)) {
    throw new KeelError(
      'tool.permission_denied',
      'Absolute paths are not allowed; give a path relative to the agent file',
      {
        guidance: 'Use a relative path such as notes/today.md',
      },
    );
  }
  const realRoot = await realpath(root);
  const candidate = resolve(realRoot, requested);
  let real: string;
  try {
    real = await realpath(candidate);
  } catch (error) {
    throw new KeelError('tool.invalid_input', `No such file: ${requested}`, { cause: error });
  }
  const inside = relative(realRoot, real);
  if (inside.startsWith('..') || isAbsolute(inside)) {
    throw new KeelError('tool.permission_denied', `The path ${requested} leaves the agent's directory`, {
      guidance: 'Only files below the agent file directory can be read',
    });
  }
  return real;
}
