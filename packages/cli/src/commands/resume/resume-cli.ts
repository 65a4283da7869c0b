import { parseAllowedHost, trustFlagsOf } from '@keel/agent-file';
import { KeelError } from '@keel/core';
import { withStore } from '../../store.js';
import { telemetryFlagsOf } from '../../telemetry/telemetry.js';
import type { CommandEntry } from '../command-table.js';
import {
  CONSENT_HELP,
  JSON_HELP,
  REDIS_HELP,
  STORE_HELP,
  TELEMETRY_HELP,
  TELEMETRY_OPTIONS,
} from '../option-help.js';
import { TRUST_OPTIONS } from '../trust-options.js';
import { answerThroughQueue, resumeCommand } from './resume.js';

interface ResumeValues {
  approve?: string[];
  reject?: string[];
  execute?: string[];
  abandon?: string[];
  agent?: string;
  wait?: boolean;
  json?: boolean;
  store?: string;
  redis?: string;
  'allow-key-host'?: string[];
  'allow-host'?: string[];
  'allow-programs'?: boolean;
  'allow-env'?: string[];
  otlp?: string;
  'metrics-port'?: string;
  log?: string;
}

/** `keel resume <run-id>`. */
export const resumeCli: CommandEntry = {
  name: 'resume',
  summary: 'resume an interrupted run, answering the calls it waits on',
  usage: `keel resume: resume an interrupted run from its last checkpoint, answering the calls it waits on

usage: keel resume <run-id> [--approve KEY]... [--reject KEY[=REASON]]... [--execute KEY]... [--abandon KEY]...
                   [--wait] [--agent <agent.yaml>] [--json] [--store URL|PATH] [--redis URL]
                   [--allow-host HOST]... [--allow-programs] [--allow-env NAME]... [--allow-key-host HOST]...
                   [--otlp URL] [--metrics-port N] [--log json]

options:
  --approve KEY   run a call that waits for approval (KEY is its idempotency key, printed by keel run)
  --reject KEY=R  refuse it; the model sees a tool error with the reason R
  --execute KEY   run again a call that may or may not have run before a crash (its effect may happen twice)
  --abandon KEY   give up on such a call; the model is told its outcome is unknown
  --agent FILE    the agent file (relative or absolute), for a run started in another directory or machine
  --wait          when another process holds the run (its owner may have died), wait until its lease ends, at
                  most 10 minutes, then resume
${JSON_HELP}
${STORE_HELP}
${REDIS_HELP}
${CONSENT_HELP}
                  (keel resume keeps the consent a run was started with, and adds these)
${TELEMETRY_HELP}

exit codes: 0 completed, 1 failed, 2 invalid input, 3 interrupted (resumable), 130 cancelled`,
  options: {
    approve: { type: 'string', multiple: true },
    reject: { type: 'string', multiple: true },
    execute: { type: 'string', multiple: true },
    abandon: { type: 'string', multiple: true },
    agent: { type: 'string' },
    wait: { type: 'boolean' },
    json: { type: 'boolean' },
    store: { type: 'string' },
    redis: { type: 'string' },
    'allow-key-host': { type: 'string', multiple: true },
    ...TRUST_OPTIONS,
    ...TELEMETRY_OPTIONS,
  },
  run: ({ values: parsed, positionals }, { environment, output, workingDirectory, signal, clock }) => {
    const values = parsed as ResumeValues;
    const [runId, ...extra] = positionals;
    if (runId === undefined || extra.length > 0)
      throw new KeelError('config.invalid', 'usage: keel resume <run-id> [options]');
    const options: Parameters<typeof resumeCommand>[0] = {
      runId,
      approve: values.approve ?? [],
      reject: values.reject ?? [],
      execute: values.execute ?? [],
      abandon: values.abandon ?? [],
      allowedKeyHosts: (values['allow-key-host'] ?? []).map(parseAllowedHost),
      trust: trustFlagsOf(values),
      wait: values.wait === true,
      json: values.json === true,
      workingDirectory,
      environment,
      signal,
      clock,
    };
    if (values.agent !== undefined) options.agentFile = values.agent;
    options.telemetry = telemetryFlagsOf(values, environment);
    if (values.redis !== undefined) {
      const redis = values.redis;
      return withStore(values.store, workingDirectory, {}, (store) =>
        answerThroughQueue(options, store, redis, output),
      );
    }
    return withStore(values.store, workingDirectory, {}, (store) => resumeCommand(options, store, output));
  },
};
