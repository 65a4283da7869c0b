// `@modelcontextprotocol/server-filesystem`, confined to a scratch directory, in a whole agent run: a read inside
// its root works, and reads outside it (an absolute path, a `..` escape) are errors the model sees with the
// server's text, not exceptions and not silence.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agent, type Message } from '@keel/core';
import { scriptedModel } from '@keel/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { FILESYSTEM_SERVER } from './fixtures/servers.js';
import { mcpTools } from './toolset.js';

const outside = realpathSync(mkdtempSync(join(tmpdir(), 'keel-mcp-fs-')));
const root = join(outside, 'root');
mkdirSync(root);
writeFileSync(join(root, 'notes.txt'), 'inside the root');
writeFileSync(join(outside, 'secret.txt'), 'outside the root');
const files = mcpTools({ command: process.execPath, args: [FILESYSTEM_SERVER, root], prefix: 'fs' });
afterAll(async () => {
  await files.close();
  rmSync(outside, { recursive: true, force: true });
});

function toolResults(messages: readonly Message[]): Array<Record<string, unknown>> {
  return messages
    .filter((message) => message.role === 'tool')
    .map((message) => JSON.parse(message.content) as Record<string, unknown>);
}

describe('server-filesystem in an agent run', () => {
  it('reads inside its root; reads outside it reach the model as errors with the server’s text', async () => {
    const tools = await files.tools();
    expect(tools.map((tool) => tool.name)).toContain('fs_read_text_file');
    const assistant = agent({
      model: scriptedModel([
        {
          toolCalls: [
            { name: 'fs_read_text_file', arguments: { path: join(root, 'notes.txt') } },
            { name: 'fs_read_text_file', arguments: { path: join(outside, 'secret.txt') } },
            { name: 'fs_read_text_file', arguments: { path: join(root, '..', 'secret.txt') } },
          ],
        },
        { content: 'read what I could' },
      ]),
      tools,
    });
    const result = await assistant.run('Read the notes');

    expect(result.status).toBe('completed');
    const [inside, absolute, escaped] = toolResults(result.messages);
    // The server sends structured content, which the model gets as it is.
    expect(inside).toEqual({ status: 'success', content: { content: 'inside the root' } });
    for (const denied of [absolute, escaped]) {
      expect(denied).toMatchObject({
        status: 'error',
        error: {
          code: 'tool.failed',
          message: expect.stringMatching(/Access denied - path outside allowed directories/),
          data: { server: 'fs', tool: 'read_text_file' },
        },
      });
      expect(JSON.stringify(denied)).not.toContain('outside the root');
    }
    expect(result.report.toolCalls.errors).toBe(2);
    expect(result.report.errors.byCode).toEqual({ 'tool.failed': 2 });
  });

  it('takes idempotence from the annotations: read-only or idempotent tools are, edits and moves are not', async () => {
    const tools = await files.tools();
    const idempotent = (name: string) => tools.find((tool) => tool.name === name)?.idempotent;
    expect(idempotent('fs_read_text_file')).toBe(true);
    expect(idempotent('fs_write_file')).toBe(true);
    expect(idempotent('fs_edit_file')).toBe(false);
    expect(idempotent('fs_move_file')).toBe(false);
  });
});
