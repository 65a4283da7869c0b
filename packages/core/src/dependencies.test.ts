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

describe('@keel/core dependencies', () => {
  it('has no import cycle among the files of agent/ (type-only imports count too)', () => {
    expect(importCycles(sourceFiles(join(sourceRoot, 'agent')))).toEqual([]);
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
    expect(index).not.toMatch(/export \*/);
  });
});
