#!/usr/bin/env node
// Code blocks in Markdown taken from the examples, which CI type-checks and runs. A block follows a marker
//   <!-- example: examples/first-agent.ts#first-agent -->
// and holds that region of the file: the lines between `// #region first-agent` and `// #endregion`, every part of
// the region in order, each part dedented.
//
//   node scripts/sync-snippets.mjs [--check] [FILE.md ...]     (default: the README and the site's pages with code)
//
// Without --check it rewrites each marked block from its region. With --check it writes nothing and exits 1 when a
// block differs from its region, a region is missing, or a ```ts block has no marker.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const MARKER = /^<!-- example: ([^#\s]+)#([\w-]+) -->$/;

/** The region's text, or undefined when the file has no such region. */
function exampleRegion(source, region) {
  const parts = [];
  let current;
  for (const line of source.split('\n')) {
    if (line.trim() === `// #region ${region}`) current = [];
    else if (line.trim() === '// #endregion' && current !== undefined) {
      const indent = Math.min(
        ...current.filter((text) => text.trim() !== '').map((text) => /^ */.exec(text)[0].length),
      );
      parts.push(current.map((text) => text.slice(indent)));
      current = undefined;
    } else if (current !== undefined) current.push(line);
  }
  if (parts.length === 0) return undefined;
  return parts
    .flat()
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Checks or rewrites one Markdown file; returns the problems found (each a sentence with the line). */
function sync(file, check) {
  const lines = readFileSync(file, 'utf8').split('\n');
  const problems = [];
  for (let index = 0; index < lines.length; index++) {
    if (lines[index] !== '```ts') continue;
    const end = lines.indexOf('```', index + 1);
    const marker = MARKER.exec(lines[index - 1] ?? '');
    if (marker === null) {
      problems.push(
        `${file}:${index + 1}: a \`\`\`ts block with no <!-- example: FILE#REGION --> marker above it`,
      );
      index = end;
      continue;
    }
    let source;
    try {
      source = readFileSync(join(ROOT, marker[1]), 'utf8');
    } catch {
      problems.push(`${file}:${index}: ${marker[1]} does not exist`);
      index = end;
      continue;
    }
    const region = exampleRegion(source, marker[2]);
    if (region === undefined) {
      problems.push(`${file}:${index}: ${marker[1]} has no region ${marker[2]}`);
    } else if (
      lines
        .slice(index + 1, end)
        .join('\n')
        .trim() !== region
    ) {
      if (check)
        problems.push(
          `${file}:${index + 1}: differs from ${marker[1]}#${marker[2]} (node scripts/sync-snippets.mjs)`,
        );
      else {
        const replacement = region.split('\n');
        lines.splice(index + 1, end - index - 1, ...replacement);
        index += replacement.length + 1;
        continue;
      }
    }
    index = end;
  }
  if (!check) writeFileSync(file, lines.join('\n'));
  return problems;
}

const argv = process.argv.slice(2);
const check = argv.includes('--check');
const files = argv.filter((argument) => argument !== '--check');
/** The pages whose TypeScript blocks are examples' regions. */
const PAGES = ['README.md', 'docs/getting-started.md', 'docs/concepts.md'];
const problems = (files.length > 0 ? files : PAGES.map((page) => join(ROOT, page))).flatMap((file) =>
  sync(file, check),
);
for (const problem of problems) console.error(problem);
process.exitCode = problems.length > 0 ? 1 : 0;
