// `tools/list_changed` through a whole agent run: the toolset is a core ToolSource, so the agent connects it at its
// first step and offers, at every step, the tools the server lists now.
import { agent, type Message, type ModelRequest } from '@keel/core';
import { scriptedModel } from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { FIXTURE_SERVER } from './fixtures/servers.js';
import { type McpToolset, mcpTools } from './toolset.js';

const opened: McpToolset[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((toolset) => toolset.close()));
});

const offered = (request: ModelRequest) => (request.tools ?? []).map((definition) => definition.name);

function toolResults(messages: readonly Message[]): unknown[] {
  return messages.filter((message) => message.role === 'tool').map((message) => JSON.parse(message.content));
}

describe('an MCP toolset passed to agent({ tools })', () => {
  it('connects at the first step, offers an added tool at the next step and stops offering a removed one', async () => {
    const toolset = mcpTools({ command: process.execPath, args: [FIXTURE_SERVER], prefix: 'fx' });
    opened.push(toolset);
    const model = scriptedModel([
      { toolCalls: [{ name: 'fx_add_tool' }] },
      { toolCalls: [{ name: 'fx_extra' }] },
      { toolCalls: [{ name: 'fx_remove_tool' }] },
      { toolCalls: [{ name: 'fx_extra' }] },
      { content: 'done' },
    ]);
    const assistant = agent({ model, tools: [toolset] });
    expect(toolset.state).toBe('idle');

    const result = await assistant.run('Change the tools');

    expect(result.status).toBe('completed');
    const extraOffered = model.calls.map((request) => offered(request).includes('fx_extra'));
    expect(extraOffered).toEqual([false, true, true, false, false]);
    expect(offered(model.calls[0]!)).toContain('fx_echo');
    expect(toolResults(result.messages)).toEqual([
      { status: 'success', content: 'added' },
      { status: 'success', content: 'extra' },
      { status: 'success', content: 'removed' },
      // No longer offered: the agent tells the model the tool does not exist, without asking the server.
      expect.objectContaining({
        status: 'error',
        error: expect.objectContaining({ code: 'tool.not_found' }),
      }),
    ]);
    expect(assistant.breakers.has('tool:fx_extra')).toBe(true);
  });

  it('reads the version only, while the server lists nothing new', async () => {
    const toolset = mcpTools({ command: process.execPath, args: [FIXTURE_SERVER], prefix: 'fx' });
    opened.push(toolset);
    const model = scriptedModel([
      { toolCalls: [{ name: 'fx_echo', arguments: { text: 'a' } }] },
      { toolCalls: [{ name: 'fx_echo', arguments: { text: 'b' } }] },
      { content: 'done' },
    ]);
    const result = await agent({ model, tools: [toolset] }).run('Echo twice');
    expect(result.status).toBe('completed');
    const versionAfterRun = toolset.version;
    const definitions = model.calls.map((request) => request.tools);
    // The same definitions array at every step: nothing was rebuilt.
    expect(definitions[1]).toBe(definitions[0]);
    expect(definitions[2]).toBe(definitions[0]);
    expect(toolset.version).toBe(versionAfterRun);
  });
});
