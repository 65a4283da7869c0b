// The trust model of agent files, rule by rule, on files parsed in memory (trust-cli.test.ts runs the stranger's
// files end to end through the built binary, against a server that counts what it receives).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeelError } from '@keel/core';
import { afterAll, describe, expect, it } from 'vitest';
import { type AgentFileOptions, parseAgentFile } from './agent-file.js';
import { looksSecret, mergeTrustFlags, parseAllowedHostOrRange, trustFlagsOf } from './trust.js';

/** The names of the CLI's built-in tools, which these files may list. */
const BUILTIN_TOOL_NAMES = ['get_weather', 'calculator', 'read_file', 'create_ticket'] as const;

const directory = mkdtempSync(join(tmpdir(), 'keel-trust-'));
const path = join(directory, 'agent.yaml');
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function parse(lines: string[], options: AgentFileOptions = {}) {
  return parseAgentFile(['name: a', ...lines].join('\n'), path, BUILTIN_TOOL_NAMES, options);
}

function refusal(lines: string[], options: AgentFileOptions = {}): KeelError {
  try {
    parse(lines, options);
  } catch (error) {
    if (KeelError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected the file to be refused');
}

const model = (baseUrl: string) => [`model: { provider: openai, name: m, baseUrl: "${baseUrl}" }`];
const command = (extra: string[] = []) => [
  'tools:',
  '  - command:',
  '      name: shout',
  '      description: Shouts',
  '      input: { type: object, properties: {} }',
  `      argv: [${JSON.stringify(process.execPath)}, -e, "1"]`,
  ...extra,
];
const http = (url: string, allow?: string) => [
  'tools:',
  '  - http:',
  '      name: get_item',
  '      description: Reads an item',
  '      input: { type: object, properties: {} }',
  `      url: "${url}"`,
  ...(allow === undefined ? [] : [`      allow: [${allow}]`]),
];

describe('trust: where the conversation may go', () => {
  it('goes without consent to the simulated provider, the provider’s own host over https, and this machine', () => {
    for (const lines of [
      ['model: simulated:sim-primary'],
      ['model: openai:gpt-4.1-mini'],
      ['model: { provider: anthropic, name: claude-haiku-4-5 }'],
      model('https://api.openai.com/v1'),
      model('http://localhost:11434/v1'),
      model('http://127.0.0.5:8080/v1'),
      model('http://[::1]:8080/v1'),
      model('http://2130706433/v1'),
    ])
      expect(() => parse(lines), lines.join()).not.toThrow();
  });

  it('refuses any other host, naming the file, line, column and the flag; --allow-host lets it through', () => {
    const error = refusal(model('http://llm.example.net:4000/v1'));
    expect(error.code).toBe('config.invalid');
    expect(error.message).toBe(
      `${path}:2:46: model.baseUrl would send the conversation (and every file the agent reads) to llm.example.net:4000, which is neither openai's own host (https://api.openai.com) nor this machine (needs --allow-host llm.example.net:4000)`,
    );
    expect(error.guidance).toMatch(/run with --allow-host llm\.example\.net:4000$/);
    expect(error.data).toMatchObject({ file: path, line: 2, column: 46, field: 'model.baseUrl' });
    for (const allowedHosts of [['llm.example.net:4000'], ['llm.example.net']])
      expect(() => parse(model('http://llm.example.net:4000/v1'), { allowedHosts })).not.toThrow();
    expect(() =>
      parse(model('http://llm.example.net:4000/v1'), { allowedHosts: ['llm.example.net:4001'] }),
    ).toThrow(/needs --allow-host llm\.example\.net:4000/);
    // A private address is not this machine; a range naming it is consent.
    expect(refusal(model('http://10.1.2.3/v1')).message).toMatch(/needs --allow-host 10\.1\.2\.3\)/);
    expect(() => parse(model('http://10.1.2.3/v1'), { allowedHosts: ['10.1.0.0/16'] })).not.toThrow();
    // The provider's own host over plain http is not its own host over https.
    expect(refusal(model('http://api.openai.com/v1')).message).toMatch(
      /needs --allow-host api\.openai\.com\)$/,
    );
  });

  it('checks fallbacks too, and --allow-key-host implies --allow-host', () => {
    const lines = [
      'fallbacks:',
      '  - { provider: anthropic, name: c, baseUrl: "https://proxy.example.net" }',
    ];
    expect(refusal(lines).guidance).toMatch(/--allow-key-host proxy\.example\.net$/);
    expect(() => parse(lines, { allowedKeyHosts: ['proxy.example.net'] })).not.toThrow();
  });

  it('refuses an http: tool or an mcp: url on another host, and lets one on this machine through', () => {
    expect(refusal(http('https://api.example.com/items')).message).toMatch(
      /tools\[0\]\.http\.url would send the model's arguments to api\.example\.com \(needs --allow-host api\.example\.com\)/,
    );
    expect(() =>
      parse(http('https://api.example.com/items'), { allowedHosts: ['api.example.com'] }),
    ).not.toThrow();
    const mcp = (url: string) => ['tools:', `  - mcp: { url: "${url}" }`];
    expect(refusal(mcp('https://mcp.example.com/mcp')).message).toMatch(
      /tools\[0\]\.mcp\.url would send the model's arguments to the MCP server at mcp\.example\.com \(needs --allow-host mcp\.example\.com\)/,
    );
    expect(() => parse(mcp('http://127.0.0.1:3001/mcp'))).not.toThrow();
  });

  it('refuses every allow: entry the command line does not name, even on this machine', () => {
    const error = refusal(http('http://127.0.0.1:8080/items', '127.0.0.1, "10.1.0.0/16"'));
    expect(error.message.split('\n')).toEqual([
      `${path}:8:15: tools[0].http.allow[0] lets the tool reach 127.0.0.1, which the SSRF guard blocks (this machine, private or reserved addresses) (needs --allow-host 127.0.0.1)`,
      `${path}:8:26: tools[0].http.allow[1] lets the tool reach 10.1.0.0/16, which the SSRF guard blocks (this machine, private or reserved addresses) (needs --allow-host 10.1.0.0/16)`,
    ]);
    expect(error.guidance).toMatch(/--allow-host 127\.0\.0\.1 --allow-host 10\.1\.0\.0\/16$/);
    expect(() =>
      parse(http('http://127.0.0.1:8080/items', '127.0.0.1, "10.1.0.0/16"'), {
        allowedHosts: ['127.0.0.0/8', '10.0.0.0/8'],
      }),
    ).not.toThrow();
    // A narrower range on the command line does not consent to a wider one in the file.
    expect(() =>
      parse(http('http://10.1.2.3/items', '"10.1.0.0/16"'), { allowedHosts: ['10.1.2.0/24'] }),
    ).toThrow(/needs --allow-host 10\.1\.0\.0\/16/);
    expect(() =>
      parse(http('http://api.internal/items', 'api.internal'), { allowedHosts: ['api.internal'] }),
    ).not.toThrow();
  });
});

describe('trust: programs and the variables they get', () => {
  it('needs nothing for built-in tools', () => {
    expect(() => parse([`tools: [${BUILTIN_TOOL_NAMES.join(', ')}]`])).not.toThrow();
  });

  it('refuses a command: tool or an mcp: server keel would run without --allow-programs', () => {
    expect(refusal(command()).message).toBe(
      `${path}:7:14: tools[0].command.argv[0] would start the program ${process.execPath} -e 1 (needs --allow-programs)`,
    );
    expect(() => parse(command(), { allowPrograms: true })).not.toThrow();
    const servers = [
      'tools:',
      `  - mcp: { command: ${JSON.stringify(process.execPath)}, args: [-e, "1"] }`,
      '  - mcp: { package: "@modelcontextprotocol/server-filesystem", args: ["."] }',
    ];
    expect(refusal(servers).message.split('\n')).toEqual([
      `${path}:3:21: tools[0].mcp.command would start the MCP server ${process.execPath} -e 1 (needs --allow-programs)`,
      `${path}:4:21: tools[1].mcp.package would start the MCP server of @modelcontextprotocol/server-filesystem (needs --allow-programs)`,
    ]);
    expect(() => parse(servers, { allowPrograms: true })).not.toThrow();
  });

  it('passes harmless variables with --allow-programs, and secret-looking ones only with --allow-env NAME', () => {
    expect(() =>
      parse(command(['      env: [HOME, LANG, LOG_LEVEL, "MODE=fast"]']), { allowPrograms: true }),
    ).not.toThrow();
    const secret = command(['      env: [HOME, AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN]']);
    const error = refusal(secret, { allowPrograms: true });
    expect(error.message.split('\n')).toEqual([
      `${path}:8:19: tools[0].command.env[1] would pass keel's AWS_SECRET_ACCESS_KEY, whose name looks like a secret, to a program (needs --allow-env AWS_SECRET_ACCESS_KEY)`,
      `${path}:8:42: tools[0].command.env[2] would pass keel's GITHUB_TOKEN, whose name looks like a secret, to a program (needs --allow-env GITHUB_TOKEN)`,
    ]);
    expect(error.data.flags).toEqual(['--allow-env AWS_SECRET_ACCESS_KEY', '--allow-env GITHUB_TOKEN']);
    expect(() =>
      parse(secret, { allowPrograms: true, allowedEnv: ['AWS_SECRET_ACCESS_KEY', 'GITHUB_TOKEN'] }),
    ).not.toThrow();
    // Without --allow-programs both are asked for at once.
    expect(refusal(secret).data.flags).toEqual([
      '--allow-programs',
      '--allow-env AWS_SECRET_ACCESS_KEY',
      '--allow-env GITHUB_TOKEN',
    ]);
  });

  it.each([
    ['AWS_SECRET_ACCESS_KEY', true],
    ['OPENAI_API_KEY', true],
    ['GITHUB_TOKEN', true],
    ['DB_PASSWORD', true],
    ['PGPASSWORD', true],
    ['GOOGLE_APPLICATION_CREDENTIALS', true],
    ['SSH_PRIVATE_KEY_PATH', true],
    ['SENTRY_DSN', true],
    ['DATABASE_URL', true],
    ['SESSION_COOKIE', true],
    ['HOME', false],
    ['LANG', false],
    ['LOG_LEVEL', false],
    ['PATH', false],
    ['GIT_DIR', false],
    ['NODE_ENV', false],
    ['TZ', false],
  ])('%s looks like a secret: %s', (name, secret) => {
    expect(looksSecret(name)).toBe(secret);
  });
});

describe('trust: the flags', () => {
  it('reads --allow-host names, name:port and ranges, and refuses anything else', () => {
    expect(
      ['LLM.Internal', 'llm.internal:4000', '10.1.0.0/16', '127.0.0.1', '::1', 'fd00::/8'].map(
        parseAllowedHostOrRange,
      ),
    ).toEqual(['llm.internal', 'llm.internal:4000', '10.1.0.0/16', '127.0.0.1', '::1', 'fd00::/8']);
    for (const bad of ['', 'http://x/', 'a b', '10.0.0.0/33', 'user@host'])
      expect(() => parseAllowedHostOrRange(bad), bad).toThrow(/--allow-host takes a host name/);
    expect(() => trustFlagsOf({ 'allow-env': ['NOT A NAME'] })).toThrow(/--allow-env takes a variable name/);
    expect(
      trustFlagsOf({ 'allow-host': ['a.example'], 'allow-programs': true, 'allow-env': ['X_TOKEN'] }),
    ).toEqual({
      allowedHosts: ['a.example'],
      allowPrograms: true,
      allowedEnv: ['X_TOKEN'],
    });
  });

  it('merges what a run was started with and what resume is given', () => {
    expect(
      mergeTrustFlags(
        { allowedHosts: ['a'], allowPrograms: true },
        { allowedHosts: ['a', 'b'], allowedEnv: ['X'] },
      ),
    ).toEqual({ allowedHosts: ['a', 'b'], allowPrograms: true, allowedEnv: ['X'] });
    expect(mergeTrustFlags(undefined, {})).toEqual({});
  });
});
