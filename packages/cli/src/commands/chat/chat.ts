import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parseAllowedHost, trustFlagsOf } from '@keel/agent-file';
import { checkSessionId, KeelError } from '@keel/core';
import { buildAgent } from '../../build/build-agent.js';
import { saveInvocation } from '../../build/invocation.js';
import { faultsSummary } from '../../build/models.js';
import type { Output } from '../../output/output.js';
import { apiKeyValues } from '../../output/redacting-output.js';
import { openStore } from '../../store.js';
import { integerArgument, parsedArguments } from '../command-arguments.js';
import { TRUST_OPTIONS, TRUST_USAGE } from '../trust-options.js';
import { type ChatStreams, chatInput } from './chat-input.js';
import { JsonChatView } from './chat-json.js';
import { ChatLoop } from './chat-loop.js';
import { type ChatView, TextChatView } from './chat-view.js';
import { StreamRedactor } from './stream-redactor.js';

/** `keel chat --help`. */
export const CHAT_USAGE = `usage: keel chat <agent.yaml> [--session ID] [--json] [--store URL|PATH] [--faults SPEC] [--seed N]
                 [--allow-host HOST]... [--allow-programs] [--allow-env NAME]... [--allow-key-host HOST]...

An interactive chat with the agent of <agent.yaml>, kept in a session of the run store: the answer streams as it is
written, retries, fallbacks and tool calls show inline (and, while the model sends nothing, how long it has been
waited for), and a tool call that needs approval is asked about (y/n, with a reason for a refusal). Every answered
turn is saved; come back to the conversation with --session.

options:
  --session ID    the session to continue (or start): 1 to 128 letters, digits and . _ : @ - (default: a new one,
                  printed at the start)
  --json          one JSON object per line (events, answers, decisions) for machines; read lines are messages,
                  and "y" or "n [reason]" answer the decisions a run waits for
  --store         postgres://... or a SQLite file (default: ./.keel/keel.db)
  --faults SPEC   fault schedule of the simulated provider (see keel --help)
  --seed N        seed of the fault schedule (default: 1)
  --allow-key-host HOST
                  a host other than the provider's own that may receive the agent's API key (see keel --help)
${TRUST_USAGE}

keys: Ctrl-C stops the answer being written (the session keeps what completed); Ctrl-C or Ctrl-D at the prompt, or
/exit, leaves.`;

/** The options of `keel chat`, for `parseArgs`. */
export const CHAT_OPTIONS = {
  session: { type: 'string' },
  json: { type: 'boolean' },
  store: { type: 'string' },
  faults: { type: 'string' },
  seed: { type: 'string' },
  'allow-key-host': { type: 'string', multiple: true },
  ...TRUST_OPTIONS,
} as const;

/** What `keel chat` runs with. */
export interface ChatContext {
  environment: NodeJS.ProcessEnv;
  output: Output;
  workingDirectory: string;
  signal: AbortSignal;
  /** The terminal. Defaults to the process's stdin and stdout. */
  streams?: ChatStreams;
}

/** `keel chat <agent.yaml> [--session ID]`: an interactive conversation on a session; exits 0 when the user leaves. */
export async function chatCommand(argv: readonly string[], context: ChatContext): Promise<number> {
  const { values, positionals } = parse(argv);
  if (values.help === true) {
    context.output.out(CHAT_USAGE);
    return 0;
  }
  const [file, ...extra] = positionals;
  if (file === undefined || extra.length > 0) {
    throw new KeelError(
      'config.invalid',
      'usage: keel chat <agent.yaml> [--session ID] (see keel chat --help)',
    );
  }
  const sessionId = values.session ?? `chat-${randomUUID().slice(0, 8)}`;
  checkSessionId(sessionId, 'keel chat --session');
  const seed = values.seed === undefined ? undefined : integerArgument('--seed', values.seed, 0);
  const allowedKeyHosts = (values['allow-key-host'] ?? []).map(parseAllowedHost);
  const trust = trustFlagsOf(values);
  const simulation = {
    ...(values.faults === undefined ? {} : { faults: values.faults }),
    ...(seed === undefined ? {} : { seed }),
    ...(allowedKeyHosts.length === 0 ? {} : { allowedKeyHosts }),
    ...(Object.keys(trust).length === 0 ? {} : { trust }),
  };
  const json = values.json === true;
  const streams = context.streams ?? { input: process.stdin, output: process.stdout };
  const { workingDirectory } = context;
  const agentFile = resolve(workingDirectory, file);
  const store = openStore(values.store, workingDirectory);
  try {
    const built = await buildAgent({
      agentFile,
      workingDirectory,
      environment: context.environment,
      store,
      ...simulation,
    });
    try {
      const write = (text: string) => {
        streams.output.write(text);
      };
      const redactor = new StreamRedactor(apiKeyValues(context.environment));
      const view: ChatView = json
        ? new JsonChatView(write, redactor)
        : new TextChatView(
            context.output,
            write,
            redactor,
            (streams.output as { isTTY?: boolean }).isTTY === true,
          );
      const comeBack = [
        'keel chat',
        file,
        '--session',
        sessionId,
        ...(values.store === undefined ? [] : ['--store', values.store]),
      ].join(' ');
      const session = await store.loadSession(sessionId);
      view.started({
        sessionId,
        agentName: built.file.name,
        models: [built.models.model, ...built.models.fallbacks]
          .map((model) => `${model.provider}/${model.model}`)
          .join(' → '),
        ...(built.models.simulated
          ? { simulated: { faults: faultsSummary(built.file, values.faults), seed: seed ?? 1 } }
          : {}),
        session,
        comeBack,
      });
      const input = chatInput(streams, json ? undefined : (text) => write(redactor.redact(text)));
      const loop = new ChatLoop(
        {
          agent: built.agent,
          store,
          sessionId,
          signal: context.signal,
          beforeRun: (runId) => saveInvocation(workingDirectory, runId, { agentFile, ...simulation }),
        },
        input,
        view,
      );
      await loop.run(session?.activeRunId);
      view.left(sessionId, comeBack);
      return 0;
    } finally {
      // Its MCP servers too, not only the simulated provider.
      await built.close();
    }
  } finally {
    await store.close();
  }
}

function parse(argv: readonly string[]) {
  return parsedArguments('chat', () =>
    parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: { ...CHAT_OPTIONS, help: { type: 'boolean', short: 'h' } },
    }),
  );
}
