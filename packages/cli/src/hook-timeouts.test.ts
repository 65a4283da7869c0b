// A guard over every test file of the workspace: a setup or teardown hook that starts or stops something slow (a
// process, a browser, Redis, PostgreSQL, an MCP server, a `keel` run) states its own timeout, since vitest's default
// hook timeout (10 s) is too short for that on a loaded CI machine: the hook fails and its file's tests are skipped.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** What a slow hook awaits: a child process, a browser, a database or Redis, an MCP server, a CLI run. */
const SLOW =
  /\b(keel|keelIn|spawn|execFile|fork|launch|launchBrowser|startRedis|startPostgres|startCommand|urgentTicket|connect)\s*\(|\bchromium\b|\badmin\b|\bredis\b\??\.stop|\bbrowser\b\??\.close/;

function testFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory())
      return entry.name === 'node_modules' || entry.name === 'dist' ? [] : testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Each hook call of `text`: its name, line and arguments' text. */
function hooksOf(text: string): Array<{ hook: string; line: number; args: string }> {
  const hooks: Array<{ hook: string; line: number; args: string }> = [];
  for (const match of text.matchAll(/\b(beforeAll|beforeEach|afterAll|afterEach)\(/g)) {
    const start = match.index + match[0].length;
    let depth = 1;
    let end = start;
    while (depth > 0 && end < text.length) {
      if (text[end] === '(') depth++;
      else if (text[end] === ')') depth--;
      end++;
    }
    hooks.push({
      hook: match[1]!,
      line: text.slice(0, match.index).split('\n').length,
      args: text.slice(start, end - 1),
    });
  }
  return hooks;
}

/** Slow hooks of the workspace's test files that leave vitest's default timeout, as `file:line hook`. */
function slowHooksWithoutTimeout(): string[] {
  const files = [
    ...readdirSync(join(root, 'packages')).flatMap((name) => testFiles(join(root, 'packages', name, 'src'))),
    ...testFiles(join(root, 'bench', 'src')),
  ];
  return files.flatMap((path) =>
    hooksOf(readFileSync(path, 'utf8'))
      .filter(({ args }) => SLOW.test(args) && !/,\s*[\w.]+\s*,?\s*$/.test(args.trim()))
      .map(({ hook, line }) => `${relative(root, path)}:${line} ${hook}`),
  );
}

describe('test hooks', () => {
  it('that start or stop something slow set their own timeout', () => {
    expect(slowHooksWithoutTimeout()).toEqual([]);
  });
});
