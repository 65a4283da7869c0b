// keel's subject of the peer comparison (see agent-peers.ts): it imports keel alone.
import { agent, tool as keelTool } from '@keel/core';
import {
  type AgentRunner,
  description,
  lookup,
  lookupInput,
  MAX_STEPS,
  PEER_RUN_STEPS,
} from './agent-peers.js';
import { stepModel } from './step-agent.js';

/** keel: `agent().run()` with the model of the keel benchmark and a zod tool. */
export function keelRunner(): AgentRunner {
  const assistant = agent({
    model: stepModel(PEER_RUN_STEPS),
    tools: [keelTool({ name: 'lookup', description, input: lookupInput, idempotent: true, execute: lookup })],
    limits: { maxTurns: MAX_STEPS },
  });
  return async () => {
    const result = await assistant.run('go');
    if (result.status !== 'completed' || result.output !== 'done')
      throw new Error(`keel run ended ${result.status}`);
  };
}
