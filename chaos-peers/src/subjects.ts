// The subjects of the peer comparison, and the worker module of its crash scenario (`createChaosSubject`).

import { loadAgentFile } from '@keel/agent-file';
import type { ChaosSubject } from '@keel/chaos';
import { BUILTIN_TOOL_NAMES, createChaosSubject as keelChaosSubject } from '@keel/cli';
import { type JsonValue, KeelError } from '@keel/core';
import { aiSdkSubject } from './ai-sdk-subject.js';
import { type FleetRedis, keelPaceSubject } from './keel-pace-subject.js';
import { naiveSubject } from './naive-subject.js';
import { openAIAgentsSubject } from './openai-agents-subject.js';

/**
 * The subjects compared, in the scorecard's order. `keel-pace` (keel's fleet with the pace governor, its state in
 * Redis) runs only the `quota` scenario.
 */
export const PEER_KINDS = ['keel', 'keel-pace', 'ai-sdk', 'openai-agents', 'naive-loop'] as const;

/** One of {@link PEER_KINDS}. */
export type PeerKind = (typeof PEER_KINDS)[number];

/** Makes the subject `options.kind` for the agent file `options.agentFile` (also in a crash worker process). */
export async function createChaosSubject(options: JsonValue): Promise<ChaosSubject> {
  const { kind, agentFile, redis } = (options ?? {}) as {
    kind?: PeerKind;
    agentFile?: string;
    redis?: FleetRedis;
  };
  if (typeof agentFile !== 'string' || !PEER_KINDS.includes(kind as PeerKind)) {
    throw new KeelError('config.invalid', `createChaosSubject: kind must be one of ${PEER_KINDS.join(', ')}`);
  }
  if (kind === 'keel') return keelChaosSubject({ agentFile, name: 'keel' });
  const file = await loadAgentFile(agentFile, BUILTIN_TOOL_NAMES);
  if (kind === 'keel-pace') {
    if (redis === undefined)
      throw new KeelError('config.invalid', 'createChaosSubject: keel-pace needs redis');
    const worker = { module: import.meta.url, options: { kind, agentFile, redis: { ...redis } } };
    return keelPaceSubject(file, agentFile, redis, worker);
  }
  const worker = { module: import.meta.url, options: { kind: kind!, agentFile } };
  if (kind === 'ai-sdk') return aiSdkSubject(file, worker);
  if (kind === 'openai-agents') return openAIAgentsSubject(file, worker);
  return naiveSubject(file, worker);
}
