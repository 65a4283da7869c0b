import { parseAllowedHost, trustFlagsOf } from '@keel/agent-file';
import { KeelError } from '@keel/core';
import { withStore } from '../../store.js';
import { telemetryFlagsOf } from '../../telemetry/telemetry.js';
import { integerArgument } from '../command-arguments.js';
import type { CommandEntry } from '../command-table.js';
import { CONSENT_HELP, JSON_HELP, STORE_HELP, TELEMETRY_HELP, TELEMETRY_OPTIONS } from '../option-help.js';
import { TRUST_OPTIONS } from '../trust-options.js';
import { runCommand } from './run.js';

interface RunValues {
  faults?: string;
  seed?: string;
  json?: boolean;
  store?: string;
  'allow-key-host'?: string[];
  'allow-host'?: string[];
  'allow-programs'?: boolean;
  'allow-env'?: string[];
  otlp?: string;
  'metrics-port'?: string;
  log?: string;
}

/** `keel run <agent.yaml> "<task>"`. */
export const runCli: CommandEntry = {
  name: 'run',
  summary: 'run an agent file durably, showing live what happens, then the report',
  usage: `keel run: run an agent file durably, showing live what happens, then the report

usage: keel run <agent.yaml> "<task>" [--faults SPEC] [--seed N] [--json] [--store URL|PATH]
                [--allow-host HOST]... [--allow-programs] [--allow-env NAME]... [--allow-key-host HOST]...
                [--otlp URL] [--metrics-port N] [--log json]

options:
  --faults SPEC   fault schedule of the simulated provider: a preset (none, demo, flaky, chaos) or entries such as
                  "rate_limit=0.2,server_error=0.1,reset=0.05" (default: none)
  --seed N        seed of the fault schedule (default: 1)
${JSON_HELP}
${STORE_HELP}
${CONSENT_HELP}
${TELEMETRY_HELP}

exit codes: 0 completed, 1 failed, 2 invalid input, 3 interrupted (resumable: keel resume <run-id>), 130 cancelled`,
  options: {
    faults: { type: 'string' },
    seed: { type: 'string' },
    json: { type: 'boolean' },
    store: { type: 'string' },
    'allow-key-host': { type: 'string', multiple: true },
    ...TRUST_OPTIONS,
    ...TELEMETRY_OPTIONS,
  },
  run: ({ values: parsed, positionals }, { environment, output, workingDirectory, signal, clock }) => {
    const values = parsed as RunValues;
    const [file, task, ...extra] = positionals;
    if (file === undefined || task === undefined || extra.length > 0) {
      throw new KeelError('config.invalid', 'usage: keel run <agent.yaml> "<task>" (quote the task)');
    }
    const options: Parameters<typeof runCommand>[0] = {
      file,
      task,
      allowedKeyHosts: (values['allow-key-host'] ?? []).map(parseAllowedHost),
      trust: trustFlagsOf(values),
      json: values.json === true,
      workingDirectory,
      environment,
      signal,
      clock,
    };
    if (values.faults !== undefined) options.faults = values.faults;
    if (values.seed !== undefined) options.seed = integerArgument('--seed', values.seed, 0);
    options.telemetry = telemetryFlagsOf(values, environment);
    return withStore(values.store, workingDirectory, {}, (store) => runCommand(options, store, output));
  },
};
