// The workspace's packages as the scripts and their tests see them: every folder of packages/ with a package.json.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root folder. */
export const REPOSITORY_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The fields of a package.json the scripts read. */
export interface PackageManifest {
  name: string;
  version: string;
  private?: boolean;
  description?: string;
  license?: string;
  type?: string;
  homepage?: string;
  keywords?: string[];
  sideEffects?: boolean | string[];
  repository?: { type: string; url: string; directory?: string };
  bin?: Record<string, string>;
  exports?: Record<string, { types?: string; import?: string }>;
  files?: string[];
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  optionalDependencies?: Record<string, string>;
}

/** A workspace package: its folder relative to the root (`packages/core`), absolute path and manifest. */
export interface WorkspacePackage {
  folder: string;
  path: string;
  manifest: PackageManifest;
}

/** Every package under packages/, in name order, private ones included. */
export function workspacePackages(): WorkspacePackage[] {
  const parent = join(REPOSITORY_ROOT, 'packages');
  return readdirSync(parent)
    .sort()
    .filter((name) => existsSync(join(parent, name, 'package.json')))
    .map((name) => ({
      folder: `packages/${name}`,
      path: join(parent, name),
      manifest: JSON.parse(readFileSync(join(parent, name, 'package.json'), 'utf8')) as PackageManifest,
    }));
}

/** The packages npm publishes: every package under packages/ that is not private. */
export function publishedPackages(): WorkspacePackage[] {
  return workspacePackages().filter((entry) => entry.manifest.private !== true);
}
