import type { AgentFile } from '@keel/agent-file';
import type { ChaosSubject } from '@keel/chaos';
import { agentFileSubject } from '@keel/cli';
import { redisState } from '@keel/redis';

/** Where the fleet's shared state lives: a Redis URL, and a namespace of this comparison's own. */
export interface FleetRedis {
  readonly redisUrl: string;
  readonly namespace: string;
}

/**
 * keel's fleet with the pace governor: the agent file's agent as `keel` builds it, plus `pace` with one window shared
 * by every process of the fleet through Redis (`redisState(...).paceStore()`). Runs only the `quota` scenario: the comparison of the
 * governor on (this subject) and off (`keel`) in a fleet of processes sharing one API key.
 */
export function keelPaceSubject(
  file: AgentFile,
  agentFile: string,
  redis: FleetRedis,
  worker: ChaosSubject['worker'],
): ChaosSubject {
  return agentFileSubject(
    file,
    { agentFile, name: 'keel-pace' },
    {
      ...(worker === undefined ? {} : { worker }),
      scenarios: ['quota'],
      extend: async (environment) => {
        // One namespace per scenario server, so that what a scenario taught the fleet does not carry to the next.
        const state = redisState({
          url: redis.redisUrl,
          namespace: `${redis.namespace}-${environment.scenario}-${new URL(environment.baseUrl).port}`,
        });
        await state.ready();
        return {
          options: {
            pace: { store: state.paceStore() },
          },
          close: () => state.close(),
        };
      },
    },
  );
}
