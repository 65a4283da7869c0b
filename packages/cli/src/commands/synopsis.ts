/** The widest line of a synopsis, in characters. */
const WIDTH = 118;

/**
 * One command's synopsis, taken from its `--help` text: the `usage:` lines up to the first blank line, as entries that
 * each start with `keel`, wrapped at {@link WIDTH} between options, their continuation lines indented under the first
 * argument. What `keel --help` and the README list, so that neither can drift from the command's own help.
 */
export function synopsisOf(usage: string): string[] {
  const lines = usage.split('\n');
  const start = lines.findIndex((line) => line.startsWith('usage:'));
  if (start === -1) throw new Error(`a command's usage has no "usage:" line: ${lines[0]}`);
  const texts = [(lines[start] as string).slice('usage:'.length).trim()];
  for (let index = start + 1; index < lines.length && (lines[index] as string).trim() !== ''; index++)
    texts.push((lines[index] as string).trim());
  const entries: string[][] = [];
  for (const text of texts) {
    if (text === '') continue;
    if (text.startsWith('keel ') || entries.length === 0) entries.push([text]);
    else entries[entries.length - 1]?.push(text);
  }
  return entries.flatMap((entry) => wrapped(entry.join(' ')));
}

/** Every command's synopsis, in order, then `keel --version`. */
export function commandSynopsis(commands: readonly { readonly usage: string }[]): string {
  return [...commands.flatMap((command) => synopsisOf(command.usage)), 'keel --version'].join('\n');
}

/** `text` in lines of at most {@link WIDTH}, broken before an option (`[`), continuations under the first argument. */
function wrapped(text: string): string[] {
  const pieces = optionPieces(text);
  const command = /^keel( [a-z-]+)+ /.exec(text)?.[0] ?? 'keel ';
  const indent = ' '.repeat(command.length);
  const lines: string[] = [];
  let line = '';
  for (const piece of pieces) {
    if (line === '') line = lines.length === 0 ? piece : `${indent}${piece}`;
    else if (line.length + 1 + piece.length <= WIDTH) line = `${line} ${piece}`;
    else {
      lines.push(line);
      line = `${indent}${piece}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** `text` cut at each space before a `[` that opens an option, not one inside it (`[--tenant-limit [TENANT=]N]`). */
function optionPieces(text: string): string[] {
  const pieces: string[] = [];
  let depth = 0;
  let from = 0;
  for (let index = 0; index < text.length; index++) {
    const character = text[index];
    if (character === '[') depth++;
    else if (character === ']') depth--;
    else if (character === ' ' && depth === 0 && text[index + 1] === '[') {
      pieces.push(text.slice(from, index));
      from = index + 1;
    }
  }
  pieces.push(text.slice(from));
  return pieces;
}
