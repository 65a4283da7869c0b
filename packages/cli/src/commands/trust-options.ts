// The consent flags (`--allow-host`, `--allow-programs`, `--allow-env`) on the command line; @keel/agent-file checks
// their values (trustFlagsOf) and an agent file against them.

/** The `parseArgs` options of the consent flags, the same for every command that loads an agent file. */
export const TRUST_OPTIONS = {
  'allow-host': { type: 'string', multiple: true },
  'allow-programs': { type: 'boolean' },
  'allow-env': { type: 'string', multiple: true },
} as const;

/** The usage lines of the consent flags, for each command's help. */
export const TRUST_USAGE = `  --allow-host HOST
                  let the conversation and tool requests go to HOST (name, name:port, or an address range such as
                  10.1.0.0/16): a model's baseUrl, an http: tool's url or allow: entry, an mcp: url; without it they
                  go only to the provider's own host over https and to this machine (see the README's trust model)
  --allow-programs
                  let the agent file start programs: command: tools and mcp: servers run by keel
  --allow-env NAME
                  let those programs get keel's NAME, a variable whose name looks like a secret (HOME, LANG or
                  LOG_LEVEL pass without it)`;
