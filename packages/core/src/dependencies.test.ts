import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const sourceRoot = fileURLToPath(new URL('.', import.meta.url));

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

function importsOf(path: string): string[] {
  const text = readFileSync(path, 'utf8');
  const specifiers = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]/g)];
  const dynamic = [...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)];
  return [...specifiers, ...dynamic].map((match) => match[1]!);
}

/** Every import cycle among `files` (relative imports only), each as a path `a.ts -> b.ts -> a.ts`, found by depth-first search. */
function importCycles(files: string[]): string[] {
  const known = new Set(files);
  const edges = new Map(
    files.map((path) => [
      path,
      importsOf(path)
        .filter((specifier) => specifier.startsWith('.'))
        .map((specifier) => resolve(dirname(path), specifier.replace(/\.js$/, '.ts')))
        .filter((target) => known.has(target)),
    ]),
  );
  const cycles: string[] = [];
  const done = new Set<string>();
  const stack: string[] = [];
  const visit = (path: string): void => {
    if (done.has(path)) return;
    const open = stack.indexOf(path);
    if (open >= 0) {
      cycles.push([...stack.slice(open), path].map((file) => relative(sourceRoot, file)).join(' -> '));
      return;
    }
    stack.push(path);
    for (const target of edges.get(path) ?? []) visit(target);
    stack.pop();
    done.add(path);
  };
  for (const path of files) visit(path);
  return cycles;
}

/**
 * The folders of `src` and the folders each may import (besides itself): the layers of the core, lowest first. A
 * folder is a top-level folder of `src` (`errors`, `spec`, ...), or a room of `agent/` (`agent/run`, ...); `agent` is
 * the files at the top of `agent/` (the public `agent()` and the entry points that compose the rooms: start, resume,
 * a queued run, a session's run); `.` is `index.ts`. Test files are not counted. `agent/README.md` quotes this table.
 */
const ALLOWED_FOLDER_EDGES: Readonly<Record<string, readonly string[]>> = {
  errors: [],
  policies: ['options', 'errors'],
  spec: ['errors'],
  options: ['errors'],
  schemas: ['spec', 'options', 'errors'],
  store: ['spec', 'policies', 'governance', 'options', 'errors'],
  http: ['policies', 'options', 'errors'],
  process: ['options', 'errors'],
  governance: ['spec', 'policies', 'options', 'errors'],
  content: ['spec', 'errors'],
  'agent/guardrails': ['spec', 'options', 'errors'],
  'agent/conversation': ['spec', 'options', 'errors'],
  'agent/correction': ['schemas', 'spec', 'policies', 'options', 'errors'],
  'agent/run': [
    'agent/correction',
    'agent/conversation',
    'agent/guardrails',
    'governance',
    'options',
    'schemas',
    'spec',
    'policies',
    'errors',
  ],
  'agent/durability': ['agent/run', 'agent/correction', 'options', 'spec', 'policies', 'errors'],
  'agent/tools': [
    'agent/run',
    'agent/correction',
    'agent/guardrails',
    'options',
    'schemas',
    'spec',
    'policies',
    'errors',
  ],
  'agent/loop': [
    'agent/tools',
    'agent/durability',
    'agent/run',
    'agent/correction',
    'agent/guardrails',
    'governance',
    'content',
    'options',
    'spec',
    'policies',
    'errors',
  ],
  'agent/sessions': ['agent/loop', 'agent/durability', 'agent/run', 'options', 'spec', 'policies', 'errors'],
  'agent/stream': ['agent/loop', 'agent/run', 'options', 'spec', 'errors'],
  'agent/compose': ['agent/loop', 'agent/tools', 'agent/run', 'schemas', 'spec', 'errors'],
  agent: [
    'agent/stream',
    'agent/compose',
    'agent/sessions',
    'agent/loop',
    'agent/tools',
    'agent/durability',
    'agent/run',
    'agent/correction',
    'agent/conversation',
    'agent/guardrails',
    'governance',
    'options',
    'schemas',
    'spec',
    'policies',
    'errors',
  ],
  adapter: ['agent/run', 'governance', 'content', 'options', 'schemas', 'spec', 'policies', 'errors'],
  testing: [
    'agent',
    'agent/run',
    'agent/tools',
    'agent/durability',
    'governance',
    'store',
    'http',
    'schemas',
    'spec',
    'policies',
    'options',
    'errors',
  ],
  '.': [
    'agent',
    'agent/stream',
    'agent/compose',
    'agent/sessions',
    'agent/loop',
    'agent/tools',
    'agent/durability',
    'agent/run',
    'agent/correction',
    'agent/conversation',
    'agent/guardrails',
    'governance',
    'options',
    'schemas',
    'store',
    'http',
    'spec',
    'policies',
    'errors',
  ],
};

/** The folder `path` (absolute, under `sourceRoot`) belongs to, as {@link ALLOWED_FOLDER_EDGES} names it. */
function folderOf(path: string): string {
  const parts = relative(sourceRoot, dirname(path)).split('/');
  if (parts[0] === '') return '.';
  return parts[0] === 'agent' && parts.length > 1 ? `agent/${parts[1]}` : parts[0]!;
}

/** Each folder edge among `files` (relative imports, type-only ones included), with the file imports behind it. */
function folderEdges(files: string[]): Map<string, string[]> {
  const edges = new Map<string, string[]>();
  for (const path of files) {
    for (const specifier of importsOf(path)) {
      if (!specifier.startsWith('.')) continue;
      const target = resolve(dirname(path), specifier.replace(/\.js$/, '.ts'));
      const from = folderOf(path);
      const to = folderOf(target);
      if (from === to) continue;
      const key = `${from} -> ${to}`;
      const list = edges.get(key) ?? [];
      list.push(`${relative(sourceRoot, path)} imports ${relative(sourceRoot, target)}`);
      edges.set(key, list);
    }
  }
  return edges;
}

/** A cycle among the folders of `table`, as `a -> b -> a`, or undefined when there is none. */
function folderCycle(table: Readonly<Record<string, readonly string[]>>): string | undefined {
  const done = new Set<string>();
  const stack: string[] = [];
  const visit = (folder: string): string | undefined => {
    if (done.has(folder)) return undefined;
    const open = stack.indexOf(folder);
    if (open >= 0) return [...stack.slice(open), folder].join(' -> ');
    stack.push(folder);
    for (const target of table[folder] ?? []) {
      const cycle = visit(target);
      if (cycle !== undefined) return cycle;
    }
    stack.pop();
    done.add(folder);
    return undefined;
  };
  for (const folder of Object.keys(table)) {
    const cycle = visit(folder);
    if (cycle !== undefined) return cycle;
  }
  return undefined;
}

/** The table as `agent/README.md` quotes it: one line per folder, `folder -> a, b, c` (`(nothing)` for none). */
function formatFolderTable(table: Readonly<Record<string, readonly string[]>>): string {
  return Object.entries(table)
    .map(([folder, targets]) => `${folder} -> ${targets.length === 0 ? '(nothing)' : targets.join(', ')}`)
    .join('\n');
}

describe('@keel/core dependencies', () => {
  it('imports across folders only along the edges of ALLOWED_FOLDER_EDGES', () => {
    const offenders: string[] = [];
    for (const [edge, imports] of folderEdges(sourceFiles(sourceRoot))) {
      const [from, to] = edge.split(' -> ') as [string, string];
      if (!(ALLOWED_FOLDER_EDGES[from] ?? []).includes(to)) offenders.push(`${edge} (${imports.join('; ')})`);
    }
    expect(offenders).toEqual([]);
  });

  it('names every folder of src in ALLOWED_FOLDER_EDGES', () => {
    const folders = new Set(sourceFiles(sourceRoot).map(folderOf));
    expect([...folders].filter((folder) => !(folder in ALLOWED_FOLDER_EDGES))).toEqual([]);
  });

  it('allows no folder cycle', () => {
    expect(folderCycle(ALLOWED_FOLDER_EDGES)).toBeUndefined();
    const actual: Record<string, string[]> = {};
    for (const edge of folderEdges(sourceFiles(sourceRoot)).keys()) {
      const [from, to] = edge.split(' -> ') as [string, string];
      actual[from] = [...(actual[from] ?? []), to];
    }
    expect(folderCycle(actual)).toBeUndefined();
  });

  it('finds a cycle in a table that has one', () => {
    expect(folderCycle({ a: ['b'], b: ['c'], c: ['a'] })).toBe('a -> b -> c -> a');
  });

  it('is quoted in agent/README.md', () => {
    const readme = readFileSync(join(sourceRoot, 'agent', 'README.md'), 'utf8');
    expect(readme).toContain(formatFolderTable(ALLOWED_FOLDER_EDGES));
  });

  it('has no import cycle among the files of agent/, schemas/ and spec/ (type-only imports count too)', () => {
    const files = ['agent', 'schemas', 'spec'].flatMap((folder) => sourceFiles(join(sourceRoot, folder)));
    expect(importCycles(files)).toEqual([]);
  });

  it('imports only node: builtins and its own files (testing may use vitest)', () => {
    const offenders: string[] = [];
    for (const path of sourceFiles(sourceRoot)) {
      const file = relative(sourceRoot, path);
      for (const specifier of importsOf(path)) {
        const allowed =
          specifier.startsWith('.') ||
          specifier.startsWith('node:') ||
          (file.startsWith('testing') && specifier === 'vitest');
        if (!allowed) offenders.push(`${file} imports ${specifier}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('keeps relative imports ESM-correct (ending in .js)', () => {
    const offenders = sourceFiles(sourceRoot).flatMap((path) =>
      importsOf(path)
        .filter((specifier) => specifier.startsWith('.') && !specifier.endsWith('.js'))
        .map((specifier) => `${relative(sourceRoot, path)} imports ${specifier}`),
    );
    expect(offenders).toEqual([]);
  });

  it('keeps the root entry free of the testing and http subpaths', () => {
    const index = readFileSync(join(sourceRoot, 'index.ts'), 'utf8');
    expect(index).not.toMatch(/from '\.\/testing\//);
    expect(index).not.toMatch(/from '\.\/http\//);
    expect(index).not.toMatch(/from '\.\/adapter\//);
    expect(index).not.toMatch(/from '\.\/store\/index/);
    expect(index).not.toMatch(/export \*/);
  });
});
