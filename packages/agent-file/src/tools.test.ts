// The `tools:` entries of an agent file: built-in names, mcp:, command: and http: entries. Each kind is read into
// what its factory takes; each refusal names the file, line, column and field.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeelError } from '@keel/core';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAgentFile } from './agent-file.js';

/** The names of the CLI's built-in tools, which these files may list. */
const BUILTIN_TOOL_NAMES = ['get_weather', 'calculator', 'read_file', 'create_ticket'] as const;

const directory = mkdtempSync(join(tmpdir(), 'keel-agent-tools-'));
mkdirSync(join(directory, 'repo'));
const path = join(directory, 'agent.yaml');
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const FILESYSTEM_BIN = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-filesystem/dist/index.js',
);

/** Reads `tools:` lines with the consent these tests' files need (trust.test.ts is about consent itself). */
function parse(lines: string[], allowedKeyHosts: string[] = []) {
  return parseAgentFile(['name: a', 'tools:', ...lines].join('\n'), path, BUILTIN_TOOL_NAMES, {
    allowedKeyHosts,
    allowedHosts: ['127.0.0.1'],
    allowPrograms: true,
  });
}

function refusal(lines: string[], allowedKeyHosts: string[] = []): KeelError {
  try {
    parse(lines, allowedKeyHosts);
  } catch (error) {
    if (KeelError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected the file to be refused');
}

const COUNT_INPUT =
  '      input: { type: object, properties: { count: { type: integer } }, required: [count] }';

describe('agent file tools: what each kind reads', () => {
  it('reads built-in names, an MCP package, an MCP command and URL, a command tool and an HTTP tool', () => {
    const file = parse(
      [
        '  - get_weather',
        '  - mcp:',
        '      package: "@modelcontextprotocol/server-filesystem"',
        '      args: ["."]',
        '      prefix: fs',
        '      env: [HOME, "LOG_LEVEL=debug"]',
        '      include: [list_directory]',
        '      destructiveNeedsApproval: true',
        '      timeoutMs: 5000',
        '  - mcp: { command: my-server, args: [--stdio], cwd: repo, name: mine }',
        '  - mcp:',
        '      url: https://mcp.example.com/mcp',
        '      prefix: remote',
        '      headers: { authorization: { env: REMOTE_API_TOKEN, prefix: "Bearer " }, x-team: keel }',
        '  - command:',
        '      name: git_log',
        '      description: Recent commits',
        COUNT_INPUT,
        '      argv: [git, log, --oneline, -n, "{count}", [--author, "{count}"]]',
        '      cwd: repo',
        '      env: [GIT_DIR]',
        '      timeoutMs: 2000',
        '      limits: { cpuSeconds: 5, openFiles: 64 }',
        '      successExitCodes: [0, 1]',
        '      idempotent: true',
        '  - http:',
        '      name: get_item',
        '      description: Reads an item',
        '      input: { type: object, properties: { id: { type: integer } }, required: [id] }',
        '      url: "http://127.0.0.1:8080/items/{id}"',
        '      query: { expand: "true" }',
        '      allow: [127.0.0.1]',
        '      method: get',
      ],
      ['mcp.example.com'],
    );
    expect(file.tools).toEqual([
      { kind: 'builtin', name: 'get_weather', field: 'tools[0]' },
      {
        kind: 'mcp',
        field: 'tools[1].mcp',
        prefix: 'fs',
        server: {
          kind: 'stdio',
          command: process.execPath,
          args: [FILESYSTEM_BIN, '.'],
          cwd: directory,
          env: [{ name: 'HOME' }, { name: 'LOG_LEVEL', value: 'debug' }],
          package: '@modelcontextprotocol/server-filesystem',
        },
        include: ['list_directory'],
        destructiveNeedsApproval: true,
        timeoutMs: 5000,
      },
      {
        kind: 'mcp',
        field: 'tools[2].mcp',
        name: 'mine',
        server: {
          kind: 'stdio',
          command: 'my-server',
          args: ['--stdio'],
          cwd: join(directory, 'repo'),
          env: [],
        },
      },
      {
        kind: 'mcp',
        field: 'tools[3].mcp',
        prefix: 'remote',
        server: {
          kind: 'http',
          url: 'https://mcp.example.com/mcp',
          headers: {
            authorization: { env: 'REMOTE_API_TOKEN', prefix: 'Bearer ' },
            'x-team': { text: 'keel' },
          },
        },
      },
      {
        kind: 'command',
        field: 'tools[4].command',
        name: 'git_log',
        description: 'Recent commits',
        input: { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] },
        argv: ['git', 'log', '--oneline', '-n', '{count}', ['--author', '{count}']],
        cwd: join(directory, 'repo'),
        env: [{ name: 'GIT_DIR' }],
        timeoutMs: 2000,
        limits: { cpuSeconds: 5, openFiles: 64 },
        successExitCodes: [0, 1],
        idempotent: true,
      },
      {
        kind: 'http',
        field: 'tools[5].http',
        name: 'get_item',
        description: 'Reads an item',
        input: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] },
        url: 'http://127.0.0.1:8080/items/{id}',
        query: { expand: 'true' },
        headers: {},
        allow: ['127.0.0.1'],
        method: 'GET',
      },
    ]);
    expect(file.locations['tools[5].http.url']).toBe(`${path}:32:12`);
  });
});

describe('agent file tools: refusals, located', () => {
  it.each<[string, string[], RegExp, string]>([
    [
      'an unknown built-in name',
      ['  - rm_rf'],
      /:3:5: tools\[0\] names an unknown tool "rm_rf" \(built-in tools: .*or declare one with mcp:, command: or http:\)/,
      'tools[0]',
    ],
    [
      'an unknown kind of entry',
      ['  - shell: { run: ls }'],
      /:3:5: tools\[0\]\.shell is not a kind of tool entry/,
      'tools[0].shell',
    ],
    [
      'an entry with two kinds',
      ['  - { mcp: { command: a }, http: { url: b } }'],
      /tools\[0\] must be a built-in tool name, or a mapping with one key/,
      'tools[0]',
    ],
    [
      'an MCP server with no target',
      ['  - mcp: { prefix: x }'],
      /tools\[0\]\.mcp needs one of package/,
      'tools[0].mcp',
    ],
    [
      'an MCP server with a command and a URL',
      ['  - mcp: { command: a, url: "http://127.0.0.1:1/mcp" }'],
      /:3:29: tools\[0\]\.mcp\.url gives command and url: give only one/,
      'tools[0].mcp.url',
    ],
    [
      'args for a server over HTTP',
      ['  - mcp: { url: "http://127.0.0.1:1/mcp", args: [x] }'],
      /tools\[0\]\.mcp\.args applies only to a server run by keel/,
      'tools[0].mcp.args',
    ],
    [
      'headers for a server keel runs',
      ['  - mcp: { command: a, headers: { x-team: keel } }'],
      /tools\[0\]\.mcp\.headers applies only to a server over HTTP/,
      'tools[0].mcp.headers',
    ],
    [
      'an MCP URL that is not http',
      ['  - mcp: { url: "ftp://example.com/mcp" }'],
      /tools\[0\]\.mcp\.url must be an http or https URL/,
      'tools[0].mcp.url',
    ],
    [
      'a package that is not installed',
      ['  - mcp: { package: "@keel/no-such-server" }'],
      /:3:21: tools\[0\]\.mcp\.package names @keel\/no-such-server, which is installed neither/,
      'tools[0].mcp.package',
    ],
    [
      'a package name that is not one',
      ['  - mcp: { package: "../../etc" }'],
      /tools\[0\]\.mcp\.package must be an npm package name/,
      'tools[0].mcp.package',
    ],
    [
      'a command that names no program',
      ['  - mcp: { command: / }'],
      /:3:21: tools\[0\]\.mcp\.command must name a program/,
      'tools[0].mcp.command',
    ],
    [
      'a working directory that does not exist',
      ['  - mcp: { command: a, cwd: missing }'],
      /:3:29: tools\[0\]\.mcp\.cwd must be an existing directory/,
      'tools[0].mcp.cwd',
    ],
    [
      'a prefix the toolset refuses',
      ['  - mcp: { command: a, prefix: "has space" }'],
      /:3:32: tools\[0\]\.mcp\.prefix must be 1 to 32 letters/,
      'tools[0].mcp.prefix',
    ],
    [
      'two servers with one prefix',
      ['  - mcp: { command: a, prefix: fs }', '  - mcp: { command: b, prefix: fs }'],
      /:4:32: tools\[1\]\.mcp\.prefix names fs a second time \(first at tools\[0\]\.mcp\.prefix\)/,
      'tools[1].mcp.prefix',
    ],
    [
      'a secret literal in env',
      ['  - mcp: { command: a, env: ["GITHUB_TOKEN=ghp_abc"] }'],
      /:3:30: tools\[0\]\.mcp\.env\[0\] sets GITHUB_TOKEN to a literal that looks like a secret; an agent file names secrets/,
      'tools[0].mcp.env[0]',
    ],
    [
      'a literal value that looks like a key',
      ['  - mcp: { command: a, env: ["SETTINGS=sk-proj-abcdefghijklmnopqrstuvwx"] }'],
      /tools\[0\]\.mcp\.env\[0\] sets SETTINGS to a literal that looks like a secret/,
      'tools[0].mcp.env[0]',
    ],
    [
      'an env entry that is no variable name',
      ['  - mcp: { command: a, env: ["1X"] }'],
      /tools\[0\]\.mcp\.env\[0\] must be a variable name, or NAME=value/,
      'tools[0].mcp.env[0]',
    ],
    [
      'a variable named twice',
      ['  - mcp: { command: a, env: [HOME, "HOME=/tmp"] }'],
      /tools\[0\]\.mcp\.env\[1\] names HOME a second time/,
      'tools[0].mcp.env[1]',
    ],
    [
      'a literal credential header',
      ['  - mcp: { url: "https://mcp.example.com/mcp", headers: { authorization: "Bearer abc123def456" } }'],
      /:3:74: tools\[0\]\.mcp\.headers\.authorization holds a literal credential/,
      'tools[0].mcp.headers.authorization',
    ],
    [
      'a secret header from a variable that is not an API key variable',
      [
        '  - mcp: { url: "https://mcp.example.com/mcp", headers: { authorization: { env: AWS_SECRET_ACCESS_KEY } } }',
      ],
      /tools\[0\]\.mcp\.headers\.authorization\.env must name an API key variable/,
      'tools[0].mcp.headers.authorization.env',
    ],
    [
      'a secret header to a host the command line did not name',
      ['  - mcp: { url: "https://mcp.example.com/mcp", headers: { x-api-key: { env: MCP_API_KEY } } }'],
      /tools\[0\]\.mcp\.headers\.x-api-key would send the value of MCP_API_KEY to mcp\.example\.com, which --allow-key-host does not name/,
      'tools[0].mcp.headers.x-api-key',
    ],
    [
      'a command tool without argv',
      ['  - command: { name: c, description: d, input: { type: object } }'],
      /tools\[0\]\.command\.argv is required/,
      'tools[0].command.argv',
    ],
    [
      'an unquoted placeholder',
      [
        '  - command:',
        '      name: c',
        '      description: d',
        COUNT_INPUT,
        '      argv: [git, log, {count}]',
      ],
      /:7:24: tools\[0\]\.command\.argv\[2\] must be a string \(quote placeholders: write "\{count\}"/,
      'tools[0].command.argv[2]',
    ],
    [
      'a placeholder that names no input property',
      [
        '  - command:',
        '      name: c',
        '      description: d',
        COUNT_INPUT,
        '      argv: [git, log, -n, "{limit}"]',
      ],
      /:7:28: tools\[0\]\.command\.argv\[3\] is refused: placeholder \{limit\} names no property of the input schema/,
      'tools[0].command.argv[3]',
    ],
    [
      // Located from the refusal's data (its option path), not by searching the file for the placeholder's text:
      // `{coun` also begins `{count}` one argument earlier.
      'a placeholder that names no input property, beside one whose name it begins',
      [
        '  - command:',
        '      name: c',
        '      description: d',
        COUNT_INPUT,
        '      argv: [git, "-n{count}", "{coun}"]',
      ],
      /:7:32: tools\[0\]\.command\.argv\[2\] is refused: placeholder \{coun\} names no property of the input schema/,
      'tools[0].command.argv[2]',
    ],
    [
      'a placeholder for the program',
      ['  - command:', '      name: c', '      description: d', COUNT_INPUT, '      argv: ["{count}"]'],
      /:7:14: tools\[0\]\.command\.argv\[0\] is refused: command\[0\] must be the program/,
      'tools[0].command.argv[0]',
    ],
    [
      'an input that is not an object',
      ['  - command: { name: c, description: d, input: { type: string }, argv: [ls] }'],
      /:3:56: tools\[0\]\.command\.input\.type must be object/,
      'tools[0].command.input.type',
    ],
    [
      'an input schema keel cannot read',
      [
        '  - command: { name: c, description: d, input: { type: object, properties: { n: { type: number, maximum: .inf } } }, argv: [ls] }',
      ],
      /:3:106: tools\[0\]\.command\.input\.properties\.n\.maximum is refused: .*the JSON Schema holds a non-finite number/,
      'tools[0].command.input.properties.n.maximum',
    ],
    [
      'a tool name providers refuse',
      ['  - command: { name: "git log", description: d, input: { type: object }, argv: [ls] }'],
      /:3:22: tools\[0\]\.command\.name must be 1 to 64 letters/,
      'tools[0].command.name',
    ],
    [
      'a declared tool named like a listed built-in',
      [
        '  - calculator',
        '  - command: { name: calculator, description: d, input: { type: object }, argv: [ls] }',
      ],
      /:4:22: tools\[1\]\.command\.name names calculator a second time \(first at tools\[0\]\)/,
      'tools[1].command.name',
    ],
    [
      'a command working directory that does not exist',
      ['  - command: { name: c, description: d, input: { type: object }, argv: [ls], cwd: missing }'],
      /:3:83: tools\[0\]\.command\.cwd must be an existing directory \(.*missing is not one\)/,
      'tools[0].command.cwd',
    ],
    [
      'an unknown limit',
      [
        '  - command: { name: c, description: d, input: { type: object }, argv: [ls], limits: { threads: 2 } }',
      ],
      /tools\[0\]\.command\.limits\.threads is not a known field/,
      'tools[0].command.limits.threads',
    ],
    [
      'a limit commandTool refuses',
      [
        '  - command: { name: c, description: d, input: { type: object }, argv: [ls], limits: { memoryBytes: 10 } }',
      ],
      /tools\[0\]\.command\.limits\.memoryBytes is refused: limits\.memoryBytes must be an integer of at least 1048576/,
      'tools[0].command.limits.memoryBytes',
    ],
    [
      'a placeholder in an HTTP host',
      [
        '  - http: { name: h, description: d, input: { type: object, properties: { host: { type: string } } }, url: "https://{host}/x" }',
      ],
      /tools\[0\]\.http\.url is refused: the URL's host and port must be fixed/,
      'tools[0].http.url',
    ],
    [
      'a body on a GET',
      [
        '  - http: { name: h, description: d, input: { type: object }, url: "https://example.com/x", body: { a: 1 } }',
      ],
      /tools\[0\]\.http\.body is refused: a GET request cannot have a body/,
      'tools[0].http.body',
    ],
    [
      'an unknown method',
      [
        '  - http: { name: h, description: d, input: { type: object }, url: "https://example.com/x", method: FETCH }',
      ],
      /tools\[0\]\.http\.method must be one of GET, HEAD/,
      'tools[0].http.method',
    ],
    [
      'an allow entry that is neither a host nor a range',
      [
        '  - http: { name: h, description: d, input: { type: object }, url: "https://example.com/x", allow: ["a b"] }',
      ],
      /tools\[0\]\.http\.allow is refused: allow entry "a b" is neither a host name/,
      'tools[0].http.allow',
    ],
    [
      'a query placeholder that names no input property',
      [
        '  - http: { name: h, description: d, input: { type: object, properties: { id: { type: integer } } }, url: "https://example.com/x", query: { q: "{term}" } }',
      ],
      /tools\[0\]\.http\.query\.q is refused: placeholder \{term\} names no property/,
      'tools[0].http.query.q',
    ],
    [
      'a literal API key header on an HTTP tool',
      [
        '  - http: { name: h, description: d, input: { type: object }, url: "https://example.com/x", headers: { x-api-key: abc } }',
      ],
      /tools\[0\]\.http\.headers\.x-api-key holds a literal credential/,
      'tools[0].http.headers.x-api-key',
    ],
    [
      'a secret header to an HTTP host the command line did not name',
      [
        '  - http: { name: h, description: d, input: { type: object }, url: "https://example.com/x", headers: { authorization: { env: EXAMPLE_API_TOKEN, prefix: "Bearer " } } }',
      ],
      /tools\[0\]\.http\.headers\.authorization would send the value of EXAMPLE_API_TOKEN to example\.com/,
      'tools[0].http.headers.authorization',
    ],
  ])('refuses %s', (_label, lines, pattern, field) => {
    const error = refusal(lines);
    expect(error.code).toBe('config.invalid');
    expect(error.message).toMatch(pattern);
    expect(error.message.startsWith(`${path}:`)).toBe(true);
    expect(error.data).toMatchObject({
      file: path,
      field,
      line: expect.any(Number),
      column: expect.any(Number),
    });
  });

  it('says how to let a secret header go to its host, and then accepts it', () => {
    const lines = [
      '  - http:',
      '      name: h',
      '      description: d',
      '      input: { type: object }',
      '      url: "https://api.example.com:8443/x"',
      '      headers: { authorization: { env: EXAMPLE_API_TOKEN, prefix: "Bearer " } }',
    ];
    expect(refusal(lines).guidance).toBe(
      'If you trust api.example.com:8443 with that key, run with --allow-key-host api.example.com:8443',
    );
    const file = parse(lines, ['api.example.com:8443']);
    expect(file.tools[0]).toMatchObject({
      headers: { authorization: { env: 'EXAMPLE_API_TOKEN', prefix: 'Bearer ' } },
    });
  });
});
