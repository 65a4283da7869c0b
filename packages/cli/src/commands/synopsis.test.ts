import { describe, expect, it } from 'vitest';
import { COMMANDS } from './command-table.js';
import { commandSynopsis, synopsisOf } from './synopsis.js';

describe('synopsisOf', () => {
  it('takes the usage lines of either layout, up to the first blank line', () => {
    expect(
      synopsisOf('keel x: what\n\nusage: keel x <a> [--b]\n              [--c N]\n\noptions:\n  --b'),
    ).toEqual(['keel x <a> [--b] [--c N]']);
    expect(synopsisOf('usage:\n  keel g one [--a]\n  keel g two <id>\n         [--b]\n\nmore')).toEqual([
      'keel g one [--a]',
      'keel g two <id> [--b]',
    ]);
  });

  it('wraps between options, never inside one, continuations under the first argument', () => {
    const options = Array.from({ length: 12 }, (_, index) => `[--option-${index} VALUE]`).join(' ');
    const lines = synopsisOf(`usage: keel worker <file>... ${options} [--limit [TENANT=]N]...`);
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(118);
    for (const line of lines.slice(1)) expect(line).toMatch(/^ {12}\[--/);
    expect(lines.join(' ')).toContain('[--limit [TENANT=]N]...');
  });

  it('refuses a usage text with no usage line', () => {
    expect(() => synopsisOf('keel x: nothing here')).toThrow('no "usage:" line');
  });
});

describe('the synopsis of every command', () => {
  it('names every option the command takes', () => {
    const missing = COMMANDS.flatMap((command) => {
      const synopsis = synopsisOf(command.usage).join(' ');
      return Object.keys(command.options)
        .filter((option) => !synopsis.includes(`--${option}`))
        .map((option) => `keel ${command.name} --${option}`);
    });
    expect(missing).toEqual([]);
  });

  it('lists every command once, in the table order, then --version', () => {
    const starts = commandSynopsis(COMMANDS)
      .split('\n')
      .filter((line) => line.startsWith('keel '));
    expect(starts.map((line) => line.split(/ [<["]/)[0])).toEqual([
      ...COMMANDS.map((command) => `keel ${command.name}`),
      'keel --version',
    ]);
  });
});
