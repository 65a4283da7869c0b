// What each agent-file field holds, for the generated agent-file reference. The list of sections and fields comes
// from @keel/agent-file's AGENT_FILE_SECTIONS (the loader's own lists); a field missing here is listed without a
// description and the docs build names it.
export const AGENT_FILE_FIELD_DOCS = {
  name: "the agent's name (required)",
  instructions: 'the system instructions',
  model: '`provider:model` (`openai:gpt-4.1-mini`), a bare simulated model name, or a mapping (below)',
  fallbacks: 'models in the same forms, tried in order when the model fails',
  tools:
    'built-in tool names (`get_weather`, `calculator`, `read_file`, `create_ticket`), and `mcp:`, `command:` and `http:` entries',
  toolChoice:
    '`auto`, `none`, `required` (some tool) or `{ name: <tool> }`; a forcing choice holds until the model called a tool',
  handoffs:
    'agent files the agent may hand the conversation over to (`- ./support.yaml`), read with the same consent',
  budgets: 'token and cost budgets per run, session, tenant or for everything, optionally per period (below)',
  pace: "true: space model calls by the providers' rate-limit headers and 429s (under keel worker, one window for the fleet through Redis)",
  modelTimeoutMs: 'the longest one model request may take, in ms (default 120000)',
  streamFirstByteTimeoutMs: "the longest wait for a streamed answer's first byte, in ms (default 30000)",
  streamIdleTimeoutMs: "the longest silence between a streamed answer's chunks, in ms (default 15000)",
  limits: "run limits (below); default: the agent's",
  retry: "retry settings (below); default: the agent's",
  'model.provider': '`simulated`, `openai` or `anthropic`',
  'model.name': 'the model name sent to the provider',
  'model.baseUrl':
    "an OpenAI-compatible server elsewhere (needs `--allow-host` unless it is the provider's own host or this machine)",
  'model.apiKeyEnv':
    'the variable holding the key (`*_API_KEY` or `*_API_TOKEN`; default `OPENAI_API_KEY` or `ANTHROPIC_API_KEY`)',
  'model.contextWindowTokens': "the model's context window, in tokens",
  'model.api':
    '`chat` (Chat Completions, the default) or `responses` (the Responses API); openai and simulated',
  'model.faults': 'a fault schedule (simulated only), as `--faults` takes it',
  'limits.maxTurns': 'most model steps in a run (a positive integer)',
  'limits.timeoutMs': "the run's deadline in ms (at most 2147483647)",
  'limits.maxTokens': 'most tokens a run may use',
  'limits.maxParallelToolCalls': 'most tool calls run at once',
  'retry.maxAttempts': 'calls per model and step, the first included',
};
