import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const sourceRoot = fileURLToPath(new URL('.', import.meta.url));
const surfaceRoot = fileURLToPath(new URL('../surface/', import.meta.url));

/** Each entry of `@keel/core` (its `exports` in package.json), its source and the file listing its names. */
const ENTRIES = [
  { entry: '@keel/core', source: 'index.ts', list: 'root.txt' },
  { entry: '@keel/core/store', source: 'store/index.ts', list: 'store.txt' },
  { entry: '@keel/core/adapter', source: 'adapter/index.ts', list: 'adapter.txt' },
  { entry: '@keel/core/testing', source: 'testing/index.ts', list: 'testing.txt' },
  { entry: '@keel/core/http', source: 'http/index.ts', list: 'http.txt' },
  { entry: '@keel/core/process', source: 'process/index.ts', list: 'process.txt' },
] as const;

/**
 * The most names the root of `@keel/core` may export: the rest belong to a subpath or to no one. 150 when the surface
 * was cut by audience; 170 since streams, content parts, cost and budgets, and agents made of agents each brought
 * their entry point and option types. Raising it again is a decision made in review, as adding a name is.
 */
const ROOT_LIMIT = 170;

/** The names an entry exports, from its `export { ... } from` statements: `type Name` for types, `name` for values. */
function exportedNames(source: string): string[] {
  const text = readFileSync(`${sourceRoot}${source}`, 'utf8');
  const names: string[] = [];
  for (const match of text.matchAll(/export\s+(type\s+)?\{([^}]*)\}\s*from\s*'[^']+'/g)) {
    const allTypes = match[1] !== undefined;
    for (const raw of match[2]!.split(',')) {
      const item = raw.replace(/\/\/.*$/gm, '').trim();
      if (item === '') continue;
      const isType = allTypes || item.startsWith('type ');
      const name = item
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .pop()!
        .trim();
      names.push(isType ? `type ${name}` : name);
    }
  }
  return names.sort((left, right) => bare(left).localeCompare(bare(right), 'en'));
}

function bare(name: string): string {
  return name.replace(/^type /, '');
}

describe('the public surface of @keel/core', () => {
  for (const { entry, source, list } of ENTRIES) {
    it(`${entry} exports exactly the names of surface/${list} (regenerate with KEEL_UPDATE_SURFACE=1)`, async () => {
      const names = exportedNames(source);
      if (process.env.KEEL_UPDATE_SURFACE === '1')
        writeFileSync(`${surfaceRoot}${list}`, `${names.join('\n')}\n`);
      const committed = readFileSync(`${surfaceRoot}${list}`, 'utf8').split('\n').filter(Boolean);
      expect(names).toEqual(committed);
      // The runtime values the entry gives are the values the list names, no more and no fewer.
      const module = (await import(`./${source.replace(/\.ts$/, '.js')}`)) as Record<string, unknown>;
      const values = names.filter((name) => !name.startsWith('type ')).sort();
      expect(Object.keys(module).sort()).toEqual(values);
    });
  }

  it(`keeps the root under ${ROOT_LIMIT} names`, () => {
    expect(exportedNames('index.ts').length).toBeLessThanOrEqual(ROOT_LIMIT);
  });

  it('exports each name from one entry only (testing aside)', () => {
    const seen = new Map<string, string>();
    const twice: string[] = [];
    for (const { entry, source } of ENTRIES.filter(({ entry }) => entry !== '@keel/core/testing')) {
      for (const name of exportedNames(source)) {
        const before = seen.get(bare(name));
        if (before !== undefined) twice.push(`${bare(name)}: ${before} and ${entry}`);
        seen.set(bare(name), entry);
      }
    }
    expect(twice).toEqual([]);
  });
});
