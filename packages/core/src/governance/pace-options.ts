import { optionError } from '../options/option-error.js';
import { PaceGovernor } from './pace-governor.js';
import type { PaceStore } from './pace-store.js';

/** Whether `value` is a run's pace priority: an integer from -10 to 10. */
export function isPacePriority(value: unknown): value is number {
  return Number.isInteger(value) && Math.abs(value as number) <= 10;
}

/**
 * The agent's `pace` option as an object: where the governor's windows live and which API key they count for.
 *
 * @example
 *   const shared = redisState({ url, namespace: 'prod' });
 *   agent({ model, pace: { store: shared.paceStore(), keyName: 'prod-key' } });
 */
export interface PaceOptions {
  /**
   * Where the windows live: `@keel/redis`'s `paceStore()` paces the whole fleet against one window per
   * provider/model/key. While the store cannot answer, each call is paced by the agent's own memory store instead (the
   * run gets a `pace-store-unavailable` event), and goes back to the shared store with the next call. Defaults to a
   * memory store of the agent (as `pace: true`).
   */
  readonly store?: PaceStore;
  /**
   * A name for the API key the agent's models call with, so that agents on different keys pace against different
   * windows: the window's key is `provider/model/keyName`. Never the key itself (it would be stored in Redis). 1 to 64
   * letters, digits and `. _ : @ -`. Defaults to `default`.
   */
  readonly keyName?: string;
}

/** The `pace` option, checked: the store, the local governor to fall back to, and the key name. */
export interface ResolvedPace {
  readonly store: PaceStore;
  /** The agent's own governor: the store when pace is local, the fallback while a shared store cannot answer. */
  readonly local: PaceGovernor;
  readonly keyName: string;
}

const KNOWN = { store: true, keyName: true } satisfies Record<keyof PaceOptions, true>;

/** Checks the agent's `pace` option (`true`, `false` or {@link PaceOptions}); a bad one throws `config.invalid`. */
export function resolvePace(pace: boolean | PaceOptions | undefined): ResolvedPace | undefined {
  const fail = (message: string, option = 'pace'): never => {
    throw optionError({ where: 'agent', option, message });
  };
  if (pace === undefined || pace === false) return undefined;
  const local = new PaceGovernor();
  if (pace === true) return { store: local, local, keyName: 'default' };
  if (typeof pace !== 'object' || pace === null || Array.isArray(pace)) {
    return fail(`pace must be true, false or { store, keyName }; got ${String(pace)}`);
  }
  for (const name of Object.keys(pace)) {
    if (!(name in KNOWN)) fail(`pace: unknown option "${name}"; known options: store, keyName`);
  }
  const { store, keyName } = pace;
  if (store !== undefined) {
    const candidate = store as Partial<Record<keyof PaceStore, unknown>> | null;
    if (
      typeof candidate !== 'object' ||
      candidate === null ||
      typeof candidate.admit !== 'function' ||
      typeof candidate.observe !== 'function' ||
      typeof candidate.refused !== 'function'
    ) {
      fail(
        'pace.store must be a PaceStore (admit, observe, refused), such as @keel/redis shared.paceStore()',
        'pace.store',
      );
    }
  }
  if (keyName !== undefined && (typeof keyName !== 'string' || !/^[A-Za-z0-9._:@-]{1,64}$/.test(keyName))) {
    fail(
      `pace.keyName must be 1 to 64 letters, digits or . _ : @ -; got ${JSON.stringify(keyName)}`,
      'pace.keyName',
    );
  }
  return { store: store ?? local, local, keyName: keyName ?? 'default' };
}
