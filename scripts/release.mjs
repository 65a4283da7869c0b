#!/usr/bin/env node
// Prepares a release of every @keel/* package, in step, and stops short of publishing.
//
//   node scripts/release.mjs <version | patch | minor | major> [--notes FILE] [--date YYYY-MM-DD] [--write] [--root DIR]
//
// Without --write (the default) it prints what it would change and writes nothing. With --write it sets the one
// version in every workspace's package.json (published packages, bench, chaos-peers, docs), sets every dependency on
// a @keel/* package to `^<version>`, updates the workspace entries of package-lock.json to match (no registry call),
// and puts a CHANGELOG.md entry on top, built from the notes:
//   - `--notes FILE`: a Markdown file, taken as it is;
//   - otherwise the files in changes/*.md (one note per file, its first line a `scope: what changed` summary), which
//     --write then deletes;
//   - otherwise the subjects of the commits since the last `v*` tag (merges left out), grouped by their `scope:`.
// It never runs `npm publish`: it prints the commands that would publish, for a person to run.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const USAGE =
  'usage: node scripts/release.mjs <version | patch | minor | major> [--notes FILE] [--date YYYY-MM-DD] [--write] [--root DIR]';

/** Parses the command line into { target, notes, date, write, root }; throws with the usage on a mistake. */
function parseArguments(argv) {
  const options = { target: undefined, notes: undefined, date: undefined, write: false, root: process.cwd() };
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index];
    const value = () => {
      const next = argv[++index];
      if (next === undefined) throw new Error(`${argument} needs a value\n${USAGE}`);
      return next;
    };
    if (argument === '--write') options.write = true;
    else if (argument === '--dry-run') options.write = false;
    else if (argument === '--notes') options.notes = value();
    else if (argument === '--date') options.date = value();
    else if (argument === '--root') options.root = value();
    else if (argument.startsWith('--')) throw new Error(`unknown option ${argument}\n${USAGE}`);
    else if (options.target === undefined) options.target = argument;
    else throw new Error(`unexpected argument ${argument}\n${USAGE}`);
  }
  if (options.target === undefined) throw new Error(USAGE);
  if (options.date !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(options.date)) {
    throw new Error(`--date must be YYYY-MM-DD, not ${options.date}`);
  }
  return options;
}

const SEMVER = /^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?$/;

/** The next version: an explicit one, or the current one bumped. */
function nextVersion(current, target) {
  const parsed = SEMVER.exec(current);
  if (parsed === null) throw new Error(`the current version ${current} is not semver`);
  const [major, minor, patch] = parsed.slice(1, 4).map(Number);
  if (target === 'major') return `${major + 1}.0.0`;
  if (target === 'minor') return `${major}.${minor + 1}.0`;
  if (target === 'patch')
    return parsed[4] === undefined ? `${major}.${minor}.${patch + 1}` : `${major}.${minor}.${patch}`;
  if (!SEMVER.test(target))
    throw new Error(`${target} is neither a version (1.2.3) nor patch, minor or major`);
  if (compareVersions(target, current) <= 0)
    throw new Error(`${target} is not after the current version ${current}`);
  return target;
}

function compareVersions(left, right) {
  const a = SEMVER.exec(left);
  const b = SEMVER.exec(right);
  for (let index = 1; index <= 3; index++) {
    const difference = Number(a[index]) - Number(b[index]);
    if (difference !== 0) return difference;
  }
  if (a[4] === b[4]) return 0;
  if (a[4] === undefined) return 1;
  if (b[4] === undefined) return -1;
  return a[4] < b[4] ? -1 : 1;
}

/** Every workspace folder named by the root package.json (globs of the form `dir/*` or plain folders). */
function workspaceFolders(root) {
  const rootPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const folders = [];
  for (const pattern of rootPackage.workspaces ?? []) {
    if (pattern.endsWith('/*')) {
      const parent = pattern.slice(0, -2);
      for (const name of readdirSync(join(root, parent)).sort()) {
        if (existsSync(join(root, parent, name, 'package.json'))) folders.push(`${parent}/${name}`);
      }
    } else if (existsSync(join(root, pattern, 'package.json'))) {
      folders.push(pattern);
    }
  }
  return folders;
}

const DEPENDENCY_FIELDS = ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'];

/** Sets the version and every @keel/* range of one manifest; returns the list of changes made. */
function updateManifest(manifest, version) {
  const changes = [];
  if (manifest.version !== version) {
    changes.push(`version ${manifest.version} -> ${version}`);
    manifest.version = version;
  }
  for (const field of DEPENDENCY_FIELDS) {
    for (const name of Object.keys(manifest[field] ?? {})) {
      if (!name.startsWith('@keel/')) continue;
      const range = `^${version}`;
      if (manifest[field][name] !== range) {
        changes.push(`${field}.${name} ${manifest[field][name]} -> ${range}`);
        manifest[field][name] = range;
      }
    }
  }
  return changes;
}

/** The notes of this release, as Markdown, and the note files to delete once they are in the changelog. */
function collectNotes(root, notesFile) {
  if (notesFile !== undefined) return { markdown: readFileSync(notesFile, 'utf8').trim(), consumed: [] };
  const changesFolder = join(root, 'changes');
  if (existsSync(changesFolder)) {
    const files = readdirSync(changesFolder)
      .filter((name) => name.endsWith('.md') && name.toLowerCase() !== 'readme.md')
      .sort();
    if (files.length > 0) {
      const notes = files.map((name) => readFileSync(join(changesFolder, name), 'utf8').trim());
      return { markdown: groupByScope(notes), consumed: files.map((name) => join(changesFolder, name)) };
    }
  }
  return { markdown: groupByScope(commitSubjects(root)), consumed: [] };
}

function commitSubjects(root) {
  const git = (...argv) => execFileSync('git', argv, { cwd: root, encoding: 'utf8' }).trim();
  let range = 'HEAD';
  try {
    range = `${git('describe', '--tags', '--abbrev=0', '--match', 'v*')}..HEAD`;
  } catch {
    // No release tag yet: every commit is news.
  }
  try {
    return git('log', '--no-merges', '--format=%s', range).split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

/** Notes whose first line reads `scope: text` grouped under `### scope`; others under `### other`. */
function groupByScope(notes) {
  const groups = new Map();
  for (const note of notes) {
    const [first, ...rest] = note.split('\n');
    const match = /^([a-z0-9@/ ,.-]+):\s+(.*)$/i.exec(first);
    const scope = match === null ? 'other' : match[1].trim();
    const text = [match === null ? first : match[2], ...rest].join('\n  ').trim();
    if (!groups.has(scope)) groups.set(scope, []);
    groups.get(scope).push(`- ${text}`);
  }
  if (groups.size === 0) return '- No notable changes.';
  return [...groups.keys()]
    .sort((left, right) => (left === 'other' ? 1 : right === 'other' ? -1 : left.localeCompare(right)))
    .map((scope) => `### ${scope}\n\n${groups.get(scope).join('\n')}`)
    .join('\n\n');
}

function updateLockfile(lockfile, folders, manifests) {
  const changes = [];
  for (const folder of folders) {
    const entry = lockfile.packages?.[folder];
    if (entry === undefined) continue;
    const manifest = manifests.get(folder);
    if (entry.version !== manifest.version) {
      changes.push(`${folder} version ${entry.version} -> ${manifest.version}`);
      entry.version = manifest.version;
    }
    for (const field of DEPENDENCY_FIELDS) {
      for (const name of Object.keys(entry[field] ?? {})) {
        const wanted = manifest[field]?.[name];
        if (wanted !== undefined && entry[field][name] !== wanted) {
          changes.push(`${folder} ${field}.${name} -> ${wanted}`);
          entry[field][name] = wanted;
        }
      }
    }
  }
  return changes;
}

function main() {
  const options = parseArguments(process.argv.slice(2));
  const root = options.root;
  const folders = workspaceFolders(root);
  const manifests = new Map(
    folders.map((folder) => [folder, JSON.parse(readFileSync(join(root, folder, 'package.json'), 'utf8'))]),
  );
  const published = folders.filter((folder) => manifests.get(folder).private !== true);
  const versions = new Set(published.map((folder) => manifests.get(folder).version));
  const current = [...versions].sort(compareVersions).at(-1);
  if (versions.size > 1) {
    console.log(
      `the packages are not in step (${[...versions].join(', ')}): every one moves to the same version`,
    );
  }
  const version = nextVersion(current, options.target);
  const date = options.date ?? new Date().toISOString().slice(0, 10);

  console.log(
    `${options.write ? 'release' : 'release (dry run: nothing is written; --write writes)'} ${current} -> ${version}\n`,
  );
  for (const folder of folders) {
    for (const change of updateManifest(manifests.get(folder), version))
      console.log(`  ${folder}: ${change}`);
  }
  const lockPath = join(root, 'package-lock.json');
  const lockfile = existsSync(lockPath) ? JSON.parse(readFileSync(lockPath, 'utf8')) : undefined;
  const lockChanges = lockfile === undefined ? [] : updateLockfile(lockfile, folders, manifests);
  console.log(`  package-lock.json: ${lockChanges.length} workspace entries updated`);

  const notes = collectNotes(root, options.notes);
  const entry = `## ${version} (${date})\n\n${notes.markdown}\n`;
  const changelogPath = join(root, 'CHANGELOG.md');
  const header = '# Changelog\n\nEvery @keel/* package is released together, at one version.\n';
  const previous = existsSync(changelogPath) ? readFileSync(changelogPath, 'utf8') : header;
  const body = previous.startsWith(header) ? previous.slice(header.length).trimStart() : previous;
  const changelog = `${header}\n${entry}${body.length > 0 ? `\n${body}` : ''}`;
  console.log(`\nCHANGELOG.md entry:\n\n${entry}`);

  if (options.write) {
    for (const folder of folders) {
      writeFileSync(
        join(root, folder, 'package.json'),
        `${JSON.stringify(manifests.get(folder), null, 2)}\n`,
      );
    }
    if (lockfile !== undefined) writeFileSync(lockPath, `${JSON.stringify(lockfile, null, 2)}\n`);
    writeFileSync(changelogPath, changelog);
    for (const file of notes.consumed) rmSync(file);
  }
  console.log('This script publishes nothing. To publish, after review and a green CI:');
  console.log(`  git commit -am "release ${version}" && git tag v${version}`);
  console.log(
    `  npm run build && npm publish ${published.map((folder) => `--workspace ${folder}`).join(' ')} --access public`,
  );
}

try {
  main();
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 2;
}
