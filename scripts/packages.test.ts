// Every published package is one a stranger can adopt: metadata, LICENSE and README, ranges that let npm
// deduplicate, and a tarball with no tests, no fixtures and no source map without its sources.
// A new package under packages/ is checked by being there.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { publishedPackages, REPOSITORY_ROOT } from './workspace-packages.js';

const rootManifest = JSON.parse(readFileSync(join(REPOSITORY_ROOT, 'package.json'), 'utf8')) as {
  repository: { url: string };
};
const packages = publishedPackages();

// Files of a public subpath that are not tests even though their names say "fixture" or "scenarios": the contract
// suites of @keel/core/testing, which store and provider authors run against their own implementations.
const PUBLIC_TESTING_FOLDER = /^dist\/testing\//;
const NOT_SHIPPED =
  /(\.test\.|\.spec\.|(^|\/)test-support\/|fixture|(^|\/)__tests__\/|\.tsbuildinfo$|\.d\.ts\.map$)/;

describe('published package metadata', () => {
  it('finds the packages', () => {
    expect(packages.length).toBeGreaterThan(10);
  });

  for (const entry of packages) {
    it(`${entry.manifest.name}: LICENSE, README, repository, homepage, keywords, description, sideEffects`, () => {
      const { manifest, folder } = entry;
      expect(existsSync(join(entry.path, 'LICENSE')), `${folder}/LICENSE`).toBe(true);
      expect(readFileSync(join(entry.path, 'LICENSE'), 'utf8')).toContain('MIT License');
      expect(existsSync(join(entry.path, 'README.md')), `${folder}/README.md`).toBe(true);
      expect(manifest.license).toBe('MIT');
      expect(manifest.repository).toEqual({
        type: 'git',
        url: rootManifest.repository.url,
        directory: folder,
      });
      expect(manifest.homepage).toMatch(/^https:\/\//);
      expect(manifest.keywords).toContain('keel');
      expect(manifest.description?.length ?? 0).toBeGreaterThan(20);
      expect(manifest.sideEffects, 'sideEffects: false, or the list of files that have them').toBeDefined();
      expect(manifest.type).toBe('module');
    });

    it(`${entry.manifest.name}: caret ranges on third-party packages, ^version on @keel/* packages`, () => {
      const { manifest } = entry;
      for (const field of [
        'dependencies',
        'devDependencies',
        'peerDependencies',
        'optionalDependencies',
      ] as const) {
        for (const [name, range] of Object.entries(manifest[field] ?? {})) {
          if (name.startsWith('@keel/')) {
            expect(range, `${field}.${name}`).toBe(`^${manifest.version}`);
          } else if (field !== 'devDependencies') {
            expect(range, `${field}.${name}: an exact pin keeps npm from sharing one copy`).not.toMatch(
              /^\d/,
            );
          }
        }
      }
    });
  }

  it('every published package is at one version', () => {
    expect(new Set(packages.map((entry) => entry.manifest.version)).size).toBe(1);
  });
});

describe('npm pack --dry-run', () => {
  const folders = packages.map((entry) => entry.folder);
  let listing: Array<{ name: string; files: Array<{ path: string }> }> = [];

  it('packs every package', { timeout: 120_000 }, () => {
    const missing = packages.filter((entry) => !existsSync(join(entry.path, 'dist')));
    expect(
      missing.map((entry) => entry.folder),
      'built (npm run build) before this test',
    ).toEqual([]);
    const output = execFileSync(
      'npm',
      [
        'pack',
        '--dry-run',
        '--json',
        '--ignore-scripts',
        ...folders.flatMap((folder) => ['--workspace', folder]),
      ],
      { cwd: REPOSITORY_ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    listing = JSON.parse(output);
    expect(listing.map((pack) => pack.name).sort()).toEqual(
      packages.map((entry) => entry.manifest.name).sort(),
    );
  });

  it('lists no test files, no fixtures, no declaration maps', () => {
    const offenders = listing.flatMap((pack) =>
      pack.files
        .map((file) => file.path)
        .filter((path) => NOT_SHIPPED.test(path))
        .filter(
          (path) =>
            !(pack.name === '@keel/core' && PUBLIC_TESTING_FOLDER.test(path) && !path.endsWith('.d.ts.map')),
        )
        .map((path) => `${pack.name}: ${path}`),
    );
    expect(offenders).toEqual([]);
  });

  it('ships LICENSE and README in every tarball', () => {
    for (const pack of listing) {
      const paths = pack.files.map((file) => file.path);
      expect(paths, pack.name).toContain('LICENSE');
      expect(paths, pack.name).toContain('README.md');
    }
  });

  it('ships no source map without its sources', () => {
    const offenders: string[] = [];
    for (const pack of listing) {
      const entry = packages.find((candidate) => candidate.manifest.name === pack.name);
      if (entry === undefined) continue;
      for (const { path } of pack.files.filter((file) => file.path.endsWith('.map'))) {
        const map = JSON.parse(readFileSync(join(entry.path, path), 'utf8')) as {
          sources: string[];
          sourcesContent?: Array<string | null>;
        };
        const complete =
          map.sourcesContent !== undefined &&
          map.sourcesContent.length === map.sources.length &&
          map.sourcesContent.every((content) => typeof content === 'string');
        if (!complete) offenders.push(`${pack.name}: ${path}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
