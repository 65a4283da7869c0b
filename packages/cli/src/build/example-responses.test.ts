import { readFileSync } from 'node:fs';
import { parseAgentFile } from '@keel/agent-file';
import { describe, expect, it } from 'vitest';
import { BUILTIN_TOOL_NAMES } from '../builtin-tools/builtin-tools.js';
import { resolveModels } from './models.js';

describe('examples/responses.yaml', () => {
  it('loads, and builds its model on the Responses API', () => {
    const path = new URL('../../../../examples/responses.yaml', import.meta.url);
    const file = parseAgentFile(readFileSync(path, 'utf8'), 'responses.yaml', BUILTIN_TOOL_NAMES);
    expect(file.model).toEqual({ provider: 'openai', name: 'gpt-5-mini', api: 'responses' });
    expect(file.toolChoice).toBe('auto');
    const models = resolveModels(file, { environment: { OPENAI_API_KEY: 'sk-test' } });
    expect(models.model).toMatchObject({ provider: 'openai', model: 'gpt-5-mini' });
  });
});
