// @keel/core/testing as a user without vitest has it (vitest is an optional peer): the built entry, copied into a
// scratch folder outside the workspace where no node_modules/vitest can be found, imported by a child process.
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const packageRoot = fileURLToPath(new URL('../../', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'keel-testing-entry-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const SCRIPT = `
import { FakeClock, scriptedModel, runStoreContract } from '@keel/core/testing';
const clock = new FakeClock(1000);
await clock.advance(500);
const model = scriptedModel([{ content: 'hi' }]);
let contract;
try {
  runStoreContract('x', () => { throw new Error('never'); });
  contract = 'ran';
} catch (error) {
  contract = { code: error.code, message: error.message };
}
console.log(JSON.stringify({ now: clock.now(), model: typeof model.generate, contract }));
`;

describe('@keel/core/testing without vitest', () => {
  it('imports, gives FakeClock and the scripted model, and says a contract needs vitest', async () => {
    const installed = join(scratch, 'app', 'node_modules', '@keel', 'core');
    mkdirSync(installed, { recursive: true });
    cpSync(join(packageRoot, 'package.json'), join(installed, 'package.json'));
    cpSync(join(packageRoot, 'dist'), join(installed, 'dist'), { recursive: true });
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', SCRIPT], {
      cwd: join(scratch, 'app'),
      env: { PATH: process.env.PATH ?? '' },
    });
    expect(JSON.parse(stdout)).toEqual({
      now: 1500,
      model: 'function',
      contract: { code: 'config.invalid', message: expect.stringContaining('vitest, which cannot be found') },
    });
  }, 60_000);
});
