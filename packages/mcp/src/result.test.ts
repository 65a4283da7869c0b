import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import type { CallSite } from './errors.js';
import { toolOutput } from './result.js';

const site: CallSite = { server: 's', toolName: 's_t', mcpToolName: 't', idempotent: false };

describe('toolOutput', () => {
  it('gives one text block as a string, several as one string, and prefers structured content', () => {
    expect(toolOutput({ content: [{ type: 'text', text: 'one' }] }, site)).toBe('one');
    expect(
      toolOutput(
        {
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
        site,
      ),
    ).toBe('a\n\nb');
    expect(toolOutput({ content: [], structuredContent: { total: 3 } }, site)).toEqual({ total: 3 });
    expect(toolOutput({ content: [] }, site)).toBe('');
  });

  it('describes binary blocks and keeps links and text resources', () => {
    const result: CallToolResult = {
      content: [
        { type: 'text', text: 'see' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        { type: 'audio', data: 'AAA=', mimeType: 'audio/wav' },
        { type: 'resource_link', uri: 'file:///a.txt', name: 'a', mimeType: 'text/plain' },
        { type: 'resource', resource: { uri: 'file:///b.txt', text: 'bee' } },
        { type: 'resource', resource: { uri: 'file:///c.bin', blob: 'AAAAAAAA', mimeType: 'application/x' } },
      ],
    };
    expect(toolOutput(result, site)).toEqual([
      { type: 'text', text: 'see' },
      { type: 'image', mimeType: 'image/png', note: 'binary data left out (3 bytes)' },
      { type: 'audio', mimeType: 'audio/wav', note: 'binary data left out (2 bytes)' },
      { type: 'resource_link', uri: 'file:///a.txt', name: 'a', mimeType: 'text/plain' },
      { type: 'resource', uri: 'file:///b.txt', text: 'bee' },
      {
        type: 'resource',
        uri: 'file:///c.bin',
        mimeType: 'application/x',
        note: 'binary data left out (6 bytes)',
      },
    ]);
  });

  it('throws isError results as the server wrote them, with their code', () => {
    const failed = () => toolOutput({ isError: true, content: [{ type: 'text', text: 'disk full' }] }, site);
    expect(failed).toThrow(expect.objectContaining({ code: 'tool.failed', message: 'disk full' }));
    const unknown = () =>
      toolOutput(
        { isError: true, content: [{ type: 'text', text: 'MCP error -32602: Tool nope not found' }] },
        site,
      );
    expect(unknown).toThrow(expect.objectContaining({ code: 'tool.not_found' }));
    const invalid = () =>
      toolOutput(
        { isError: true, content: [{ type: 'text', text: 'MCP error -32602: Input validation error: a' }] },
        site,
      );
    expect(invalid).toThrow(expect.objectContaining({ code: 'tool.invalid_input' }));
    const empty = () => toolOutput({ isError: true, content: [] }, site);
    expect(empty).toThrow(
      expect.objectContaining({ code: 'tool.failed', message: 'MCP tool t reported an error without text' }),
    );
  });

  it('mapResult replaces the mapping of successes only', () => {
    const map = (result: CallToolResult) => result.content.length;
    expect(toolOutput({ content: [{ type: 'text', text: 'x' }] }, site, map)).toBe(1);
    expect(() => toolOutput({ isError: true, content: [{ type: 'text', text: 'no' }] }, site, map)).toThrow(
      'no',
    );
  });
});
