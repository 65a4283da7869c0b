// The agent-file loader against seeded mutations of valid files: every file it accepts must build (providers,
// fault schedules, limits, tools: MCP toolsets, command and HTTP tools, the agent), and every file it refuses must be
// refused with a `config.invalid` that names the file, line, column and field. Nothing may fail later without a
// location.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAgentFile } from '@keel/agent-file';
import { MemoryRunStore } from '@keel/core';
import { afterAll, describe, expect, it } from 'vitest';
import { isMap, isScalar, isSeq, type Node, parseDocument, type YAMLMap } from 'yaml';
import { BUILTIN_TOOL_NAMES } from '../builtin-tools/builtin-tools.js';
import { buildAgentFromFile } from './build-agent.js';

const SEED = Number(process.env.KEEL_FUZZ_SEED ?? 7);
const CASES = Number(process.env.KEEL_FUZZ_CASES ?? 1_500);
// A real directory: command tools and MCP servers run in the agent file's directory (or `repo` below it).
const DIRECTORY = mkdtempSync(join(tmpdir(), 'keel-fuzz-'));
mkdirSync(join(DIRECTORY, 'repo'));
afterAll(() => rmSync(DIRECTORY, { recursive: true, force: true }));
const PATH = join(DIRECTORY, 'agent.yaml');
/** Hosts the command line lets receive a secret header. */
const ALLOWED_KEY_HOSTS = ['mcp.example.com'];

const BASES = [
  [
    'name: weather',
    'instructions: Be brief.',
    'model: { provider: simulated, name: sim-primary, faults: "rate_limit=0.5,sequence=overloaded>none" }',
    'fallbacks: [simulated:sim-fallback, { provider: simulated, name: backup, contextWindowTokens: 8000 }]',
    'tools: [get_weather, calculator]',
    'limits: { maxTurns: 8, timeoutMs: 60000, maxTokens: 5000, maxParallelToolCalls: 2 }',
    'retry: { maxAttempts: 2 }',
  ].join('\n'),
  [
    'name: real',
    'model:',
    '  provider: openai',
    '  name: gpt-4.1-mini',
    '  contextWindowTokens: 128000',
    'fallbacks:',
    '  - anthropic:claude-haiku-4-5',
    '  - provider: openai',
    '    name: qwen3',
    '    baseUrl: http://127.0.0.1:11434/v1',
    'tools: [read_file, create_ticket]',
  ].join('\n'),
  ['name: minimal', 'model: openai:gpt-4.1', 'limits:', '  timeoutMs: 2147483647'].join('\n'),
  [
    'name: tools',
    'tools:',
    '  - read_file',
    '  - mcp:',
    '      package: "@modelcontextprotocol/server-filesystem"',
    '      args: ["."]',
    '      prefix: fs',
    '      include: [list_directory, read_text_file]',
    '      env: [HOME, "LOG_LEVEL=debug"]',
    '      timeoutMs: 5000',
    '  - mcp: { command: my-server, args: [--stdio], cwd: repo, destructiveNeedsApproval: true }',
    '  - mcp:',
    '      url: https://mcp.example.com/mcp',
    '      prefix: remote',
    '      headers: { authorization: { env: REMOTE_API_TOKEN, prefix: "Bearer " }, x-team: keel }',
    '  - command:',
    '      name: git_log',
    '      description: Recent commits',
    '      input: { type: object, properties: { count: { type: integer, minimum: 1 } }, required: [count] }',
    '      argv: [git, log, --oneline, -n, "{count}", [--author, "{count}"]]',
    '      cwd: repo',
    '      env: [GIT_DIR]',
    '      limits: { cpuSeconds: 5, openFiles: 64 }',
    '      successExitCodes: [0, 1]',
    '      idempotent: true',
    '  - http:',
    '      name: get_item',
    '      description: Reads an item',
    '      input: { type: object, properties: { id: { type: integer } }, required: [id] }',
    '      url: "http://127.0.0.1:8080/items/{id}"',
    '      query: { expand: "{id}" }',
    '      headers: { accept: application/json }',
    '      allow: [127.0.0.1]',
    '      timeoutMs: 2000',
  ].join('\n'),
];

const FIELDS: Record<string, readonly string[]> = {
  '': ['name', 'instructions', 'model', 'fallbacks', 'tools', 'limits', 'retry'],
  model: ['provider', 'name', 'baseUrl', 'apiKeyEnv', 'contextWindowTokens', 'faults'],
  limits: ['maxTurns', 'timeoutMs', 'maxTokens', 'maxParallelToolCalls'],
  retry: ['maxAttempts'],
  item: ['mcp', 'command', 'http', 'shell'],
  mcp: [
    'name',
    'prefix',
    'package',
    'command',
    'args',
    'env',
    'cwd',
    'url',
    'headers',
    'timeoutMs',
    'connectTimeoutMs',
    'destructiveNeedsApproval',
    'include',
    'exclude',
  ],
  command: [
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
  ],
  http: [
    'name',
    'description',
    'input',
    'method',
    'url',
    'query',
    'headers',
    'body',
    'timeoutMs',
    'maxResponseBytes',
    'maxRedirects',
    'allow',
    'idempotent',
    'needsApproval',
  ],
  headers: ['authorization', 'x-api-key', 'accept', 'x-team', 'idempotency-key'],
  input: ['type', 'properties', 'required', 'additionalProperties'],
  properties: ['count', 'id', 'path'],
};

const HOSTILE: readonly unknown[] = [
  0,
  -1,
  1,
  1.5,
  2 ** 31 - 1,
  2 ** 31,
  2 ** 53,
  1e300,
  Number.POSITIVE_INFINITY,
  Number.NaN,
  '',
  ' ',
  'x',
  '0',
  '12',
  'ftp://example.com/v1',
  'file:///etc/passwd',
  'http://',
  'javascript:alert(1)',
  'http://127.0.0.1:9/v1',
  'https://api.openai.com/v1',
  'https://api.anthropic.com',
  'AWS_SECRET_ACCESS_KEY',
  'OPENAI_API_KEY',
  'MY_API_TOKEN',
  'rate_limit=1',
  'rate_limit=2',
  'demo',
  'sim-primary:rate_limit=1',
  'meteor=1',
  'sequence=overloaded>none',
  'simulated',
  'openai',
  'anthropic',
  'simulated:x',
  'openai:gpt-4.1',
  'anthropic:',
  ':',
  'get_weather',
  'rm_rf',
  'x'.repeat(5_000),
  true,
  null,
  [],
  {},
  ['get_weather', 'get_weather'],
  ['a'],
  { name: 'm' },
  { provider: 'simulated' },
  // Tool entries.
  '{count}',
  '{id}',
  '{count:path}',
  '{missing}',
  '{{literal}}',
  'https://{host}/x',
  'https://example.com/items/{id}',
  'http://127.0.0.1:8080/x',
  'http://169.254.169.254/latest',
  'https://mcp.example.com/mcp',
  'http://attacker.example/mcp',
  'sk-proj-abcdefghijklmnopqrstuvwxyz',
  'Bearer abc123def456ghi',
  'GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789',
  'LOG_LEVEL=debug',
  'HOME',
  '1X',
  'REMOTE_API_TOKEN',
  { env: 'REMOTE_API_TOKEN', prefix: 'Bearer ' },
  { env: 'AWS_SECRET_ACCESS_KEY' },
  { env: 'OTHER_API_KEY', prefix: 3 },
  '@modelcontextprotocol/server-filesystem',
  '@keel/no-such-server',
  '../../etc',
  'repo',
  'missing',
  '..',
  '/',
  'git',
  '--upload-pack=x',
  ['git', 'log'],
  ['{count}'],
  ['git', ['--author', '{count}']],
  ['git', ['--literal']],
  [0, 1],
  [256],
  'GET',
  'post',
  'FETCH',
  '127.0.0.1',
  '10.0.0.0/8',
  'a b',
  '*.corp.example',
  { type: 'object' },
  { type: 'string' },
  { type: 'object', properties: { count: { type: 'integer' } } },
  { type: 'object', properties: 3 },
  { cpuSeconds: 1 },
  { memoryBytes: 10 },
  { maxProcesses: 4 },
  { threads: 2 },
  'list_directory',
  { command: 'x' },
  { url: 'http://127.0.0.1:1/mcp', command: 'x' },
  { name: 'dup', description: 'd', input: { type: 'object' }, argv: ['ls'] },
];

interface Random {
  next(): number;
  integer(min: number, max: number): number;
}

/** mulberry32: one seed, one sequence of files. */
function seededRandom(seed: number): Random {
  let current = seed >>> 0;
  const next = () => {
    current = (current + 0x6d2b79f5) >>> 0;
    let value = Math.imul(current ^ (current >>> 15), current | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
  return { next, integer: (min, max) => min + Math.floor(next() * (max - min + 1)) };
}

type Mutation = (document: ReturnType<typeof parseDocument>, random: Random) => void;

/** Every map in the document with its field path (`''`, `model`, `fallbacks[1]`, `limits`). */
function maps(document: ReturnType<typeof parseDocument>): { map: YAMLMap; kind: string }[] {
  const found: { map: YAMLMap; kind: string }[] = [];
  const visit = (node: unknown, kind: string) => {
    if (isMap(node)) {
      found.push({ map: node, kind });
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : '';
        visit(pair.value, key);
      }
    } else if (isSeq(node)) {
      for (const item of node.items)
        visit(item, kind === 'fallbacks' ? 'model' : kind === 'tools' ? 'item' : 'list');
    }
  };
  visit(document.contents, '');
  return found;
}

const pick = <T>(random: Random, values: readonly T[]): T => values[random.integer(0, values.length - 1)]!;

const MUTATIONS: readonly Mutation[] = [
  // Replace a field's value with a hostile one.
  (document, random) => {
    const { map } = pick(random, maps(document));
    if (map.items.length === 0) return;
    const pair = pick(random, map.items);
    pair.value = document.createNode(pick(random, HOSTILE)) as Node;
  },
  // Add a known field (or overwrite it) with a hostile value.
  (document, random) => {
    const { map, kind } = pick(random, maps(document));
    const fields = FIELDS[kind] ?? FIELDS['']!;
    map.set(pick(random, fields), document.createNode(pick(random, HOSTILE)));
  },
  // Remove a field.
  (document, random) => {
    const { map } = pick(random, maps(document));
    if (map.items.length > 0) map.items.splice(random.integer(0, map.items.length - 1), 1);
  },
  // Add an unknown field.
  (document, random) => {
    pick(random, maps(document)).map.set(
      pick(random, ['modle', 'timeout', '__proto__', 'constructor', 'shell', 'arg', 'user']),
      1,
    );
  },
  // Replace an item of a list.
  (document, random) => {
    const lists: Node[] = [];
    for (const { map } of maps(document)) {
      for (const pair of map.items) if (isSeq(pair.value)) lists.push(pair.value);
    }
    const list = lists.length === 0 ? undefined : pick(random, lists);
    if (list === undefined || !isSeq(list) || list.items.length === 0) return;
    list.items[random.integer(0, list.items.length - 1)] = document.createNode(pick(random, HOSTILE));
  },
];

/** One mutated file: a few structural mutations, and now and then a damaged character. */
function mutate(base: string, random: Random): string {
  const document = parseDocument(base);
  const count = random.integer(1, 3);
  for (let index = 0; index < count; index++) pick(random, MUTATIONS)(document, random);
  let text = document.toString();
  if (random.next() < 0.15) {
    const at = random.integer(0, text.length - 1);
    text = text.slice(0, at) + pick(random, ['', ':', '{', '"', '- ', '\n', '\t', '#']) + text.slice(at + 1);
  }
  return text;
}

/** Any variable a file names holds a key: the build fails only for what the file says. */
const environment = new Proxy({} as NodeJS.ProcessEnv, {
  get: (_target, name) => (typeof name === 'string' ? `sk-fuzz-${name}` : undefined),
});

describe('agent file loader (seeded fuzzing)', () => {
  it(`accepts only files that build, and refuses with file, line and field (seed ${SEED})`, async () => {
    const random = seededRandom(SEED);
    const escaped: string[] = [];
    let accepted = 0;
    let refused = 0;
    const builtByBase = BASES.map(() => 0);
    for (let index = 0; index < CASES; index++) {
      const text = mutate(BASES[index % BASES.length]!, random);
      let file: ReturnType<typeof parseAgentFile>;
      try {
        file = parseAgentFile(text, PATH, BUILTIN_TOOL_NAMES, {
          allowedKeyHosts: ALLOWED_KEY_HOSTS,
          // The consent the bases need (trust.test.ts is about consent itself).
          allowedHosts: ['127.0.0.1'],
          allowPrograms: true,
        });
      } catch (error) {
        refused++;
        const message = (error as Error).message;
        const located = message.startsWith(`${PATH}:`) && /^:\d+:\d+: \S/.test(message.slice(PATH.length));
        if ((error as { code?: string }).code !== 'config.invalid' || !located) {
          escaped.push(`case ${index}: refused without a location: ${message}\n${text}`);
        }
        continue;
      }
      try {
        const built = await buildAgentFromFile(file, {
          workingDirectory: DIRECTORY,
          environment,
          store: new MemoryRunStore(),
        });
        // Nothing has started (MCP servers start at the agent's first step); closing is only tidy.
        void built.close();
        accepted++;
        builtByBase[index % BASES.length]!++;
      } catch (error) {
        escaped.push(`case ${index}: accepted, then the build failed: ${(error as Error).message}\n${text}`);
      }
    }
    console.log(
      `agent file fuzzing (seed ${SEED}): ${CASES} files, ${accepted} built (by base: ${builtByBase.join(', ')}), ${refused} refused at load`,
    );
    expect(escaped.slice(0, 5).join('\n\n'), `${escaped.length} of ${CASES} escaped`).toBe('');
    expect(accepted).toBeGreaterThan(CASES / 20);
    // Each base, the one with every kind of tool entry included, yields files that build.
    for (const built of builtByBase) expect(built).toBeGreaterThan(CASES / BASES.length / 20);
    expect(refused).toBeGreaterThan(CASES / 4);
  });
});
