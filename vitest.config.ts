import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const packages = fileURLToPath(new URL('./packages/', import.meta.url));

export default defineConfig({
  resolve: {
    // Tests run against the TypeScript sources, so no build is needed before `vitest run`.
    alias: [
      {
        find: /^@keel\/core\/(testing|http|process|store|adapter)$/,
        replacement: `${packages}core/src/$1/index.ts`,
      },
      { find: /^@keel\/([a-z-]+)$/, replacement: `${packages}$1/src/index.ts` },
    ],
  },
  test: {
    include: [
      'packages/*/src/**/*.test.ts',
      'bench/src/**/*.test.ts',
      'scripts/**/*.test.ts',
      'examples/**/*.test.ts',
      'docs/scripts/**/*.test.ts',
    ],
    exclude: ['**/node_modules/**', '**/dist/**'],
    // Generous: a test that starts keel processes can take 20 s on a loaded 2-core machine; the limit only bounds a hang.
    testTimeout: 60_000,
    pool: 'forks',
    globalSetup: ['./scripts/test-services.ts'],
    // CI asks for a JSON report to print its closing `N passed, N failed` line.
    reporters: process.env.KEEL_TEST_REPORT ? ['default', 'json'] : ['default'],
    outputFile: process.env.KEEL_TEST_REPORT ? { json: process.env.KEEL_TEST_REPORT } : undefined,
  },
});
