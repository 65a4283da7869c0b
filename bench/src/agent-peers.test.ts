import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PEER_MODULES } from './agent-peers.js';

const LIBRARIES = ['@keel/core', 'ai', 'ai/test', '@openai/agents'];

/** The packages a bench module loads, following its imports of other bench modules. */
function packagesLoadedBy(file: URL, seen = new Set<string>()): Set<string> {
  const loaded = new Set<string>();
  if (seen.has(file.href)) return loaded;
  seen.add(file.href);
  const source = readFileSync(file, 'utf8');
  for (const match of source.matchAll(/^(?:import|export)\s[^;]*?from\s+'([^']+)'/gms)) {
    const specifier = match[1]!;
    if (/^import\s+type\s/.test(match[0])) continue;
    if (specifier.startsWith('./')) {
      const next = new URL(specifier.replace(/\.js$/, '.ts'), file);
      for (const name of packagesLoadedBy(next, seen)) loaded.add(name);
    } else loaded.add(specifier);
  }
  return loaded;
}

const sourceOf = (moduleUrl: string) =>
  new URL(moduleUrl.replace(/\/dist\//, '/src/').replace(/\.js$/, '.ts'));

describe("bench:agent's peer subjects", () => {
  it('each load their own library alone, so that no subject process pays for another library', () => {
    const expected = { keel: ['@keel/core'], aiSdk: ['ai', 'ai/test'], openAI: ['@openai/agents'] };
    for (const [subject, own] of Object.entries(expected)) {
      const { moduleUrl } = PEER_MODULES[subject as keyof typeof PEER_MODULES];
      const libraries = [...packagesLoadedBy(sourceOf(moduleUrl))].filter((name) => LIBRARIES.includes(name));
      expect(libraries.sort(), subject).toEqual(own);
    }
  });
});
