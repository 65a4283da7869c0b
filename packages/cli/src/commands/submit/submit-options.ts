// What `keel submit` takes and what its --help says, apart from the command so that the command table reads them
// without loading BullMQ and the Redis client.
import { TRUST_OPTIONS } from '../trust-options.js';

/** `keel submit --help`. */
export const SUBMIT_USAGE = `keel submit: queue a run of an agent file for a fleet of workers (keel worker)

usage:
  keel submit <agent.yaml> "<task>" [--store URL|PATH] [--redis URL] [--run-id ID] [--tenant NAME] [--json]
              [--priority N] [--allow-host HOST]...
              [--allow-programs] [--allow-env NAME]... [--allow-key-host HOST]...

The run is stored as queued in the store at once (keel runs list shows it), then enqueued in Redis for the workers
started with this agent file (they take the runs of the agents named in their files). Prints the run id.

options:
  --store URL     the fleet's run store: postgres://... (or a SQLite file on one machine; default ./.keel/keel.db)
  --redis URL     the fleet's Redis (default: KEEL_REDIS_URL, else redis://127.0.0.1:6379)
  --run-id ID     the run's id (default: a time-ordered UUID)
  --tenant NAME   the tenant the run spends for: the agent's tenant budgets bound it, metrics label it
                  (1 to 64 letters, digits or . _ : @ -; default: none, counted as tenant default)
  --priority N    the run's pace priority, an integer from -10 to 10: when calls wait for a provider's window
                  (an agent file with pace: true), higher ones go first (default 0)
  --json          print { runId, agentName, status, enqueued }
  --allow-key-host HOST
                  as for keel run, when the file's baseUrl points at another host than its provider's
  --allow-host HOST, --allow-programs, --allow-env NAME
                  as for keel run: the file is checked as the workers will check it (they need the same flags)

exit codes: 0 queued, 1 the store failed, 2 invalid input`;

/** The options of `keel submit`, for `parseArgs`. */
export const SUBMIT_OPTIONS = {
  store: { type: 'string' },
  redis: { type: 'string' },
  'run-id': { type: 'string' },
  tenant: { type: 'string' },
  priority: { type: 'string' },
  json: { type: 'boolean' },
  'allow-key-host': { type: 'string', multiple: true },
  ...TRUST_OPTIONS,
} as const;
