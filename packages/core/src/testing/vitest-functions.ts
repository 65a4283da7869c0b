// vitest is an optional peer of @keel/core: the contracts and scenarios here need it, FakeClock and the scripted
// model do not. It is loaded once, when @keel/core/testing is imported, and only if it can be found; without it,
// the entry still loads, and calling a contract says what is missing.
import type * as Vitest from 'vitest';
import { KeelError } from '../errors/keel-error.js';

type TestFunctions = Pick<
  typeof Vitest,
  'afterAll' | 'afterEach' | 'beforeAll' | 'beforeEach' | 'describe' | 'expect' | 'it' | 'vi'
>;

// A variable specifier, so that bundlers and type checkers leave the optional peer alone.
const VITEST = 'vitest';
const loaded: TestFunctions | undefined = await import(VITEST).then(
  (module: TestFunctions) => module,
  () => undefined,
);

function vitest(): TestFunctions {
  if (loaded !== undefined) return loaded;
  throw new KeelError(
    'config.invalid',
    'The contracts of @keel/core/testing (run store, model provider) run in vitest, which cannot be found: install it (npm install --save-dev vitest) and call them from a test file',
  );
}

/** A stand-in for vitest's `name` that finds it when called or read (`it.skip`, `expect.poll`), not at import. */
function lazy<Name extends keyof TestFunctions>(name: Name): TestFunctions[Name] {
  return new Proxy(function stand() {}, {
    apply: (_target, self, args) =>
      Reflect.apply(vitest()[name] as (...args: unknown[]) => unknown, self, args),
    get: (_target, property) => Reflect.get(vitest()[name] as object, property),
  }) as unknown as TestFunctions[Name];
}

/** vitest's `afterAll`, found when called. */
export const afterAll = lazy('afterAll');
/** vitest's `beforeAll`, found when called. */
export const beforeAll = lazy('beforeAll');
/** vitest's `afterEach`, found when called. */
export const afterEach = lazy('afterEach');
/** vitest's `beforeEach`, found when called. */
export const beforeEach = lazy('beforeEach');
/** vitest's `describe`, found when called. */
export const describe = lazy('describe');
/** vitest's `expect`, found when called. */
export const expect = lazy('expect');
/** vitest's `it`, found when called. */
export const it = lazy('it');
/** vitest's `vi` (fake timers), found when called. */
export function vitestUtilities(): TestFunctions['vi'] {
  return vitest().vi;
}
