// The `meta` option: fields (trace context, say) sent in the `_meta` of every tools/call, from the call's context.
import { afterEach, describe, expect, it } from 'vitest';
import { FIXTURE_SERVER, toolContext } from './fixtures/servers.js';
import { type McpToolset, mcpTools } from './toolset.js';

const opened: McpToolset[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((toolset) => toolset.close()));
});

describe('mcpTools meta', () => {
  it("puts the fields it returns for each call in the request's _meta", async () => {
    const toolset = mcpTools({
      command: process.execPath,
      args: [FIXTURE_SERVER],
      closeGraceMs: 300,
      meta: (context) => ({
        traceparent: `00-${'a'.repeat(32)}-${context.callIndex.toString(16).padStart(16, '0')}-01`,
      }),
    });
    opened.push(toolset);
    const meta = (await toolset.tools()).find((tool) => tool.name === 'meta');
    expect(meta).toBeDefined();
    const answer = await meta!.execute({}, toolContext(undefined, 7));
    expect(JSON.parse(String(answer))).toEqual({ traceparent: `00-${'a'.repeat(32)}-0000000000000007-01` });
  });

  it('refuses a meta that is not a function', () => {
    expect(() => mcpTools({ command: process.execPath, meta: { traceparent: 'x' } as never })).toThrow(
      /meta must be a function/,
    );
  });
});
