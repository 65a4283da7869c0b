import { KeelError } from '@keel/core';
import { withStore } from '../../store.js';
import { integerArgument } from '../command-arguments.js';
import type { CommandEntry } from '../command-table.js';
import { JSON_HELP, STORE_HELP } from '../option-help.js';
import { listRuns, showRun } from './runs.js';

interface RunsValues {
  status?: string;
  limit?: string;
  json?: boolean;
  store?: string;
}

/** `keel runs list`. Listing and showing only read: a store the user may not write still works, and none is created. */
export const runsListCli: CommandEntry = {
  name: 'runs list',
  summary: 'list the runs of a store, newest first',
  usage: `keel runs list: the runs of a store, newest first

usage: keel runs list [--status STATUS] [--limit N] [--json] [--store URL|PATH]

options:
  --status STATUS only runs in this status: queued, running, completed, failed, interrupted, cancelled
  --limit N       the most runs shown (default: 20)
${JSON_HELP}
${STORE_HELP}`,
  options: {
    status: { type: 'string' },
    limit: { type: 'string' },
    json: { type: 'boolean' },
    store: { type: 'string' },
  },
  run: ({ values: parsed, positionals }, { output, workingDirectory }) => {
    const values = parsed as RunsValues;
    if (positionals.length > 0)
      throw new KeelError('config.invalid', 'usage: keel runs list | keel runs show <run-id>');
    return withStore(values.store, workingDirectory, { readOnly: true }, (store) => {
      const options: Parameters<typeof listRuns>[1] = { json: values.json === true };
      if (values.status !== undefined) options.status = values.status;
      if (values.limit !== undefined) options.limit = integerArgument('--limit', values.limit, 1);
      return listRuns(store, options, output);
    });
  },
};

/** `keel runs show <run-id>`. */
export const runsShowCli: CommandEntry = {
  name: 'runs show',
  summary: 'show a run: its report, pending decisions and what to do next',
  usage: `keel runs show: a run's report, its pending decisions and what to do next

usage: keel runs show <run-id> [--json] [--store URL|PATH]

options:
${JSON_HELP}
${STORE_HELP}`,
  options: {
    json: { type: 'boolean' },
    store: { type: 'string' },
  },
  run: ({ values: parsed, positionals }, { output, workingDirectory }) => {
    const values = parsed as RunsValues;
    const [runId, ...extra] = positionals;
    if (runId === undefined || extra.length > 0)
      throw new KeelError('config.invalid', 'usage: keel runs list | keel runs show <run-id>');
    return withStore(values.store, workingDirectory, { readOnly: true }, (store) =>
      showRun(store, runId, { json: values.json === true }, output),
    );
  },
};
