import { createHash } from 'node:crypto';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Tool, tool } from '@keel/core';
import { evaluateArithmetic } from './arithmetic.js';
import { type ConfinementStrategy, readConfinedFile } from './confined-file.js';

/** Where the built-in tools may read and write. */
export interface BuiltinToolContext {
  /** `read_file` reads only below this directory (the agent file's). */
  filesDirectory: string;
  /** `create_ticket` appends its tickets here. */
  outboxPath: string;
  /**
   * How `read_file` keeps to `filesDirectory`: `descriptors` (any depth; needs `/proc/self/fd`, as on Linux) or
   * `top-level` (files directly in it only). Defaults to `descriptors` where `/proc/self/fd` exists, else `top-level`.
   */
  confinement?: ConfinementStrategy;
}

const WEATHER = ['sunny', 'cloudy', 'light rain', 'windy', 'snow showers', 'clear skies'] as const;
const MAX_FILE_BYTES = 64 * 1024;

/** The names of the tools an agent file may list. */
export const BUILTIN_TOOL_NAMES = ['get_weather', 'calculator', 'read_file', 'create_ticket'] as const;

function ticketOf(idempotencyKey: string, title: string, priority: string) {
  return {
    ticket: `T-${createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 8)}`,
    title,
    priority,
  };
}

/** The ticket the outbox holds for `idempotencyKey`, if any (a line cut short is skipped). */
async function outboxEntry(
  outboxPath: string,
  idempotencyKey: string,
): Promise<{ title: string; priority: string } | undefined> {
  let text: string;
  try {
    text = await readFile(outboxPath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  for (const line of text.split('\n')) {
    if (!line.includes(idempotencyKey)) continue;
    try {
      const entry = JSON.parse(line) as { idempotencyKey?: unknown; title?: unknown; priority?: unknown };
      if (entry.idempotencyKey === idempotencyKey && typeof entry.title === 'string')
        return {
          title: entry.title,
          priority: typeof entry.priority === 'string' ? entry.priority : 'normal',
        };
    } catch {
      // A line cut short by a crash.
    }
  }
  return undefined;
}

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
      description:
        "Reads a text file below the agent file's directory (at most 64 KB); symbolic links are not followed.",
      input: {
        type: 'object',
        properties: {
          path: { type: 'string', minLength: 1, description: 'A path relative to the agent file' },
        },
        required: ['path'],
        additionalProperties: false,
      },
      idempotent: true,
      execute: (input, { signal }) =>
        readConfinedFile(context.filesDirectory, (input as { path: string }).path, {
          maxBytes: MAX_FILE_BYTES,
          signal,
          ...(context.confinement === undefined ? {} : { strategy: context.confinement }),
        }),
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
        return ticketOf(idempotencyKey, title, priority);
      },
      // A call whose outcome is unknown (it timed out after writing, say) is looked up in the outbox by its key.
      reconcile: async (_input, { idempotencyKey }) => {
        const opened = await outboxEntry(context.outboxPath, idempotencyKey);
        return opened === undefined
          ? { happened: false }
          : { happened: true, output: ticketOf(idempotencyKey, opened.title, opened.priority) };
      },
    }),
  ];
  return new Map(tools.map((item) => [item.name, item]));
}
