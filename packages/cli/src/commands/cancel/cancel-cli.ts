import { KeelError } from '@keel/core';
import { withStore } from '../../store.js';
import type { CommandEntry } from '../command-table.js';
import { JSON_HELP, REDIS_HELP, STORE_HELP } from '../option-help.js';
import { cancelCommand } from './cancel.js';

interface CancelValues {
  reason?: string;
  json?: boolean;
  store?: string;
  redis?: string;
}

/** `keel cancel <run-id>`. */
export const cancelCli: CommandEntry = {
  name: 'cancel',
  summary: 'cancel a run (an interrupted one, or one a worker holds)',
  usage: `keel cancel: cancel a run; it ends cancelled and cannot be resumed

usage: keel cancel <run-id> [--reason TEXT] [--json] [--store URL|PATH] [--redis URL]

options:
  --reason TEXT   why, kept with the run
${JSON_HELP}
${STORE_HELP}
${REDIS_HELP}`,
  options: {
    reason: { type: 'string' },
    json: { type: 'boolean' },
    store: { type: 'string' },
    redis: { type: 'string' },
  },
  run: ({ values: parsed, positionals }, { output, workingDirectory }) => {
    const values = parsed as CancelValues;
    const [runId, ...extra] = positionals;
    if (runId === undefined || extra.length > 0)
      throw new KeelError('config.invalid', 'usage: keel cancel <run-id>');
    return withStore(values.store, workingDirectory, {}, (store) =>
      cancelCommand(
        store,
        runId,
        { reason: values.reason, json: values.json === true, redis: values.redis },
        output,
      ),
    );
  },
};
