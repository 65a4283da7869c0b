import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MemoryRunStore } from '@keel/core';
import { describe, expect, it } from 'vitest';
import { buildAgent } from './build-agent.js';

describe('examples/responses-offline.yaml', () => {
  it('runs offline on the simulated Responses API wire, recovering its faults', async () => {
    const workingDirectory = mkdtempSync(join(tmpdir(), 'keel-responses-offline-'));
    const built = await buildAgent({
      agentFile: fileURLToPath(new URL('../../../../examples/responses-offline.yaml', import.meta.url)),
      workingDirectory,
      environment: {},
      store: new MemoryRunStore(),
      seed: 1,
    });
    try {
      const result = await built.agent.run('Weather in Paris?');
      expect(result.status).toBe('completed');
      expect(result.report.toolCalls.total).toBeGreaterThan(0);
      const server = await built.models.server();
      const paths = new Set(server?.requests.map((request) => request.path));
      expect(paths).toEqual(new Set(['/v1/responses']));
    } finally {
      await built.close();
      rmSync(workingDirectory, { recursive: true, force: true });
    }
  }, 60_000);
});
