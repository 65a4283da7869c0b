import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { KeelError } from '@keel/core';
import type { ChaosScenario } from './scenario.js';
import { checkScenario } from './scenario-check.js';
import { SCENARIO_NAMES } from './scenarios.js';

/**
 * Loads scenario definitions from a module: a file path (relative to `directory`, the current directory by default;
 * `.js` or `.mjs`, or `.ts` where Node strips types; a path that exists, or one starting with `.` or `/`) or a package
 * specifier. The module exports `scenarios` (an array)
 * or a default export (an array, or one scenario); each is checked (see `checkScenario`), and their names must differ
 * from each other and from the built-in scenarios'. Rejects with a `config.invalid` KeelError saying what to fix.
 *
 * @example
 *   // my-scenarios.js
 *   export const scenarios = [{ name: 'slow-search', title: 'a search tool that hangs', description: '...',
 *     tools: { hangRate: 0.4 }, arrivalMs: 1000, minimum: 'clean', goals: ['completion', 'duplicates', 'typed'] }];
 *   const defined = await loadScenarios('./my-scenarios.js');
 *   await runChaos({ subjects, task, scenarios: defined });
 */
export async function loadScenarios(specifier: string, directory = process.cwd()): Promise<ChaosScenario[]> {
  if (typeof specifier !== 'string' || specifier.trim() === '') {
    throw new KeelError(
      'config.invalid',
      'loadScenarios: name a scenarios module (a file path or a package)',
    );
  }
  // A path that exists is a file (`examples/x.mjs` as typed); anything else that does not start with `.` or `/` is a
  // package specifier.
  const isPath =
    specifier.startsWith('.') || isAbsolute(specifier) || existsSync(resolve(directory, specifier));
  const target = isPath ? pathToFileURL(resolve(directory, specifier)).href : specifier;
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(target)) as Record<string, unknown>;
  } catch (error) {
    throw new KeelError(
      'config.invalid',
      `Could not load the scenarios module ${specifier}: ${(error as Error)?.message ?? String(error)}`,
      { cause: error, data: { where: 'scenarios-file', module: specifier } },
    );
  }
  const exported = loaded.scenarios ?? loaded.default;
  const list = Array.isArray(exported) ? exported : exported === undefined ? undefined : [exported];
  if (list === undefined || list.length === 0) {
    throw new KeelError(
      'config.invalid',
      `The scenarios module ${specifier} exports no scenario: export \`scenarios\` (an array of scenario definitions) or a default export`,
      { data: { where: 'scenarios-file', module: specifier } },
    );
  }
  const scenarios = list.map((entry, index) => checkScenario(entry, `${specifier}: scenarios[${index}]`));
  const seen = new Set<string>();
  for (const scenario of scenarios) {
    if (SCENARIO_NAMES.includes(scenario.name) || seen.has(scenario.name)) {
      throw new KeelError(
        'config.invalid',
        `${specifier}: the scenario name "${scenario.name}" is taken (by ${seen.has(scenario.name) ? 'another scenario of the file' : 'a built-in scenario'}); choose another`,
        { data: { where: 'scenarios-file', module: specifier } },
      );
    }
    seen.add(scenario.name);
  }
  return scenarios;
}
