// The same agent run in keel and in two peers: a model that calls a zod-typed `lookup` tool once a step, then
// answers, and the tool, both in process and doing almost nothing, so that each measures its own loop. Each peer gets
// its own fake model through its own model interface: the Vercel AI SDK's `MockLanguageModelV3` (from `ai/test`)
// under `generateText`, and an object implementing the OpenAI Agents SDK's `Model` under `run`.
//
// Each subject lives in a module of its own (agent-peer-keel.ts, agent-peer-ai-sdk.ts, agent-peer-openai.ts) that
// imports only its own library, since each runs in a process of its own (fair.ts `measureIsolated`): a process that
// had loaded every library would make each subject pay for the others' (importing the OpenAI Agents SDK alone made
// keel's steps in the same process about 1.7x dearer, in GC and colder code), which no user running one of them pays.
import { z } from 'zod';

/** Model calls per run: four tool steps, then the answer. */
export const PEER_RUN_STEPS = 5;
/** Each framework's bound on steps, well above what the run needs. */
export const MAX_STEPS = 10;

export const lookupInput = z.object({ key: z.string() });
export const lookup = ({ key }: { key: string }) => ({ value: key });
export const description = 'Looks a key up';

/** Runs one whole agent run, resolving when its answer is in; rejects if the run did not end with the answer. */
export type AgentRunner = () => Promise<void>;

/** The module of each subject, for `measureIsolated`, and its factory's name. */
export const PEER_MODULES = {
  keel: { moduleUrl: new URL('./agent-peer-keel.js', import.meta.url).href, factory: 'keelRunner' },
  aiSdk: { moduleUrl: new URL('./agent-peer-ai-sdk.js', import.meta.url).href, factory: 'aiSdkRunner' },
  openAI: {
    moduleUrl: new URL('./agent-peer-openai.js', import.meta.url).href,
    factory: 'openAIAgentsRunner',
  },
} as const;
