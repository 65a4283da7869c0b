#!/usr/bin/env node
// Generates the documentation pages that come from the code, then (with --build) the API reference and the site.
//
//   node docs/scripts/generate.mjs            the generated pages only (after `npm run build`: it reads dist/)
//   node docs/scripts/generate.mjs --build    and TypeDoc's API reference, then `vitepress build docs`
//
// Generated, never edited by hand (and ignored by git: docs/.gitignore): docs/reference/errors/*.md (one page per
// code of @keel/core's ERROR_CODES), docs/reference/cli.md (the CLI's command table), docs/reference/agent-file.md
// (the agent-file loader's field lists), docs/packages/*.md and docs/overview.md (the READMEs, links rewritten),
// docs/api/ (TypeDoc, from every package's public entry points, as their package.json `exports` name them).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AGENT_FILE_FIELD_DOCS } from './agent-file-fields.mjs';
import { ERROR_CODE_DOCS } from './error-codes.mjs';

const DOCS = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ROOT = resolve(DOCS, '..');
const rootManifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const REPOSITORY = rootManifest.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
const warnings = [];

const write = (path, text) => {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
};
const load = (path) => import(pathToFileURL(join(ROOT, path)).href);

/** Every published package: folder name, manifest, and its entry points as [specifier, source file]. */
export function publishedPackages() {
  return readdirSync(join(ROOT, 'packages'))
    .sort()
    .filter((name) => existsSync(join(ROOT, 'packages', name, 'package.json')))
    .map((name) => ({
      name,
      manifest: JSON.parse(readFileSync(join(ROOT, 'packages', name, 'package.json'), 'utf8')),
    }))
    .filter(({ manifest }) => manifest.private !== true)
    .map(({ name, manifest }) => ({
      name,
      manifest,
      entryPoints: Object.entries(manifest.exports ?? {}).map(([key, target]) => [
        key === '.' ? manifest.name : `${manifest.name}/${key.slice(2)}`,
        join('packages', name, target.types.replace(/^\.\/dist\//, 'src/').replace(/\.d\.ts$/, '.ts')),
      ]),
    }));
}

/** Rewrites a README's relative links for the site: package READMEs to their pages, other files to the repository. */
function rewriteLinks(markdown, readmePath, pagePath) {
  return markdown.replace(/(!?)\[([^\]]*)\]\(([^)\s]+)\)/g, (whole, bang, text, target) => {
    if (/^[a-z]+:/i.test(target) || target.startsWith('#')) return whole;
    const [path, anchor = ''] = target.split('#');
    const absolute = resolve(dirname(readmePath), path);
    const fromRoot = relative(ROOT, absolute);
    const hash = anchor === '' ? '' : `#${anchor}`;
    const packageReadme = /^packages\/([^/]+)\/README\.md$/.exec(fromRoot);
    if (packageReadme !== null) return `${bang}[${text}](/packages/${packageReadme[1]}${hash})`;
    if (fromRoot === 'README.md') return `${bang}[${text}](/overview${hash})`;
    if (fromRoot.startsWith('docs/') && existsSync(absolute)) {
      return `${bang}[${text}](${relative(dirname(pagePath), absolute)}${hash})`;
    }
    const kind = existsSync(absolute) && !readdirSafe(absolute) ? 'blob' : 'tree';
    return `${bang}[${text}](${REPOSITORY}/${kind}/main/${fromRoot}${hash})`;
  });
}

function readdirSafe(path) {
  try {
    return readdirSync(path);
  } catch {
    return undefined;
  }
}

/** Markdown shown as written: Vue would read `{{ }}` and `{name}` in it as template syntax (VitePress's v-pre). */
function asWritten(markdown) {
  return `::: v-pre\n\n${markdown}\n\n:::\n`;
}

function generatePackagePages(packages) {
  rmSync(join(DOCS, 'packages'), { recursive: true, force: true });
  for (const { name } of packages) {
    const readme = join(ROOT, 'packages', name, 'README.md');
    const page = join(DOCS, 'packages', `${name}.md`);
    const text = existsSync(readme) ? readFileSync(readme, 'utf8') : `# @keel/${name}\n\nNo README yet.\n`;
    write(
      page,
      `<!-- generated from packages/${name}/README.md: edit that file -->\n\n${asWritten(rewriteLinks(text, readme, page))}`,
    );
  }
  const readme = join(ROOT, 'README.md');
  const overview = join(DOCS, 'overview.md');
  write(
    overview,
    `<!-- generated from README.md: edit that file -->\n\n${asWritten(rewriteLinks(readFileSync(readme, 'utf8'), readme, overview))}`,
  );
}

async function generateErrorPages() {
  const { ERROR_CODES } = await load('packages/core/dist/errors/codes.js');
  const folder = join(DOCS, 'reference', 'errors');
  rmSync(folder, { recursive: true, force: true });
  const rows = [];
  for (const [code, { category, retryable }] of Object.entries(ERROR_CODES)) {
    const [meaning, action] = ERROR_CODE_DOCS[code] ?? [];
    if (meaning === undefined)
      warnings.push(`error code ${code} has no description in docs/scripts/error-codes.mjs`);
    write(
      join(folder, `${code}.md`),
      `# \`${code}\`\n\n| category | retried by default |\n|---|---|\n| \`${category}\` | ${retryable ? 'yes' : 'no'} |\n\n` +
        `## What it means\n\n${meaning ?? 'Not described yet.'}\n\n## What to do\n\n${action ?? 'Not described yet.'}\n\n` +
        `Every error is a \`KeelError\`: \`error.code\` is this code, \`error.retryable\` says whether keel retries it, ` +
        '`error.data` holds typed details. See [errors and codes](/concepts#errors-and-codes).\n',
    );
    rows.push(
      `| [\`${code}\`](./${code}.md) | ${category} | ${retryable ? 'yes' : 'no'} | ${meaning ?? ''} |`,
    );
  }
  write(
    join(folder, 'index.md'),
    `# Error codes\n\nEvery failure is a \`KeelError\` whose \`code\` is one of these (generated from \`packages/core/src/errors/codes.ts\`). Codes are public API: added, never renamed.\n\n| code | category | retried | meaning |\n|---|---|---|---|\n${rows.join('\n')}\n`,
  );
  return Object.keys(ERROR_CODES);
}

async function generateCliReference() {
  const { COMMANDS, COMMAND_GROUPS } = await load('packages/cli/dist/commands/command-table.js');
  const sections = COMMANDS.map(
    (command) =>
      `## keel ${command.name}\n\n${command.summary}.\n\n\`\`\`text\n${command.usage.trim()}\n\`\`\`\n`,
  );
  const groups = Object.entries(COMMAND_GROUPS).map(
    ([name, usage]) => `## keel ${name}\n\n\`\`\`text\n${usage.trim()}\n\`\`\`\n`,
  );
  write(
    join(DOCS, 'reference', 'cli.md'),
    `# The command line\n\nGenerated from the CLI's command table (\`packages/cli/src/commands/command-table.ts\`): what \`keel <command> --help\` prints. Every command refuses the options it does not take; \`keel --version\` prints the version.\n\n${[...sections, ...groups].join('\n')}`,
  );
  return COMMANDS.map((command) => command.name);
}

async function generateAgentFileReference() {
  const { AGENT_FILE_SECTIONS } = await load('packages/agent-file/dist/fields.js');
  const parts = AGENT_FILE_SECTIONS.map(({ path, fields }) => {
    const rows = fields.map((field) => {
      const key = path === '' ? field : `${path}.${field}`;
      const description = AGENT_FILE_FIELD_DOCS[key];
      if (description === undefined && !path.startsWith('tools[]')) {
        warnings.push(`agent-file field ${key} has no description in docs/scripts/agent-file-fields.mjs`);
      }
      return `| \`${field}\` | ${description ?? ''} |`;
    });
    return `## ${path === '' ? 'Top level' : `\`${path}\``}\n\n| field | what it holds |\n|---|---|\n${rows.join('\n')}\n`;
  });
  write(
    join(DOCS, 'reference', 'agent-file.md'),
    `# Agent files\n\nAn agent file is YAML read by \`@keel/agent-file\` and run by \`keel run\`. The fields below are the loader's own lists (\`AGENT_FILE_SECTIONS\` in \`packages/agent-file/src/fields.ts\`): any other field is refused, with the one meant for a misspelt one. The tools' fields are described in [the tools guide](/packages/tools), [MCP](/packages/mcp) and [the CLI's README](/packages/cli); what needs a command-line consent is in the [trust model](/overview#trust-model).\n\n${parts.join('\n')}`,
  );
}

async function runTypeDoc(packages) {
  const { Application } = await import('typedoc');
  const entryPoints = packages.flatMap((entry) => entry.entryPoints.map(([, source]) => join(ROOT, source)));
  const app = await Application.bootstrapWithPlugins({
    entryPoints,
    entryPointStrategy: 'resolve',
    tsconfig: join(ROOT, 'tsconfig.json'),
    plugin: ['typedoc-plugin-markdown', 'typedoc-vitepress-theme'],
    out: join(DOCS, 'api'),
    docsRoot: DOCS,
    readme: 'none',
    excludePrivate: true,
    excludeInternal: true,
    excludeExternals: true,
    skipErrorChecking: true,
    disableSources: true,
    hidePageHeader: true,
    // One page per entry point (a heading per export): a few dozen pages rather than a thousand keep the site's
    // build inside CI's time.
    outputFileStrategy: 'modules',
    logLevel: 'Warn',
  });
  const project = await app.convert();
  if (project === undefined) throw new Error('TypeDoc could not convert the entry points');
  rmSync(join(DOCS, 'api'), { recursive: true, force: true });
  await app.generateOutputs(project);
  // JSDoc holds text such as `{name}` and `{{ }}` that Vue would read as template syntax: the API pages are shown as
  // written (VitePress's v-pre container).
  for (const file of markdownFiles(join(DOCS, 'api'))) {
    const text = readFileSync(file, 'utf8');
    const frontMatter = /^---\n[\s\S]*?\n---\n/.exec(text)?.[0] ?? '';
    write(file, `${frontMatter}\n${asWritten(text.slice(frontMatter.length))}`);
  }
}

function markdownFiles(folder) {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? markdownFiles(join(folder, entry.name))
      : entry.name.endsWith('.md')
        ? [join(folder, entry.name)]
        : [],
  );
}

const build = process.argv.includes('--build');
const started = Date.now();
const packages = publishedPackages();
generatePackagePages(packages);
const codes = await generateErrorPages();
const commands = await generateCliReference();
await generateAgentFileReference();
write(
  join(DOCS, '.generated.json'),
  `${JSON.stringify({ packages: packages.map((entry) => entry.entryPoints), codes, commands }, null, 2)}\n`,
);
for (const warning of warnings) console.warn(`docs: ${warning}`);
console.log(`docs: pages generated in ${Date.now() - started} ms`);
if (build) {
  const typedocStarted = Date.now();
  if (!process.argv.includes('--reuse-api')) await runTypeDoc(packages);
  console.log(`docs: API reference in ${Date.now() - typedocStarted} ms`);
  const siteStarted = Date.now();
  const vitepress = join(ROOT, 'node_modules', 'vitepress', 'bin', 'vitepress.js');
  const result = spawnSync(process.execPath, [vitepress, 'build', DOCS], { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
  console.log(`docs: site built in ${Date.now() - siteStarted} ms (docs/.vitepress/dist)`);
}
