import { type JsonValue, KeelError } from '../../errors/keel-error.js';
import type { SerializedError } from '../../errors/serialize.js';
import { describe, isCount, isJsonObject } from '../validate.js';
import type { BreakerStore } from './breaker-store.js';

/**
 * Where a breaker stands. `closed`: calls run and outcomes are counted. `open`: calls are rejected until the open
 * period ends. `half-open`: a few probe calls run, the rest are rejected; the probes decide between closed and open.
 * `isolated`: held open by hand (`isolate()`) until released or reset.
 */
export type BreakerState = 'closed' | 'open' | 'half-open' | 'isolated';

const STATES: readonly BreakerState[] = ['closed', 'open', 'half-open', 'isolated'];

/**
 * A breaker's durable state as JSON, from `breaker.toJSON()`, restored with the `initialState` option (in another
 * process, or after a restart). Restoring follows the rules of {@link BreakerStore} ("Restoring a snapshot"), in short:
 *
 * - `open` stays open until `openUntilMs`; `isolated` stays isolated until `reset()`; `closed` keeps its window.
 * - `half-open` never grants a probe the snapshotting process may still be running: while probes it ran may be in
 *   flight (until `probesUntilMs`) the restored breaker is open, then half-open as usual.
 * - `cause` comes back (rebuilt with `deserializeError`) as the `cause` of `policy.circuit_open` refusals.
 */
export type BreakerSnapshot = {
  /** The format's version: 1. */
  readonly version: 1;
  readonly state: BreakerState;
  /** When the open period ends, in epoch milliseconds; null unless `state` is `open`. */
  readonly openUntilMs: number | null;
  /** Opens since the breaker was last closed; the open period grows with it. */
  readonly consecutiveOpens: number;
  /** Probe successes counted towards closing, while half-open. */
  readonly probeSuccesses: number;
  /** The strategy's `kind`: a window is only restored into the same kind of strategy. */
  readonly strategy: string;
  /** The strategy's window, from `BreakerWindow.toJSON()`. */
  readonly window: JsonValue;
  /**
   * While half-open: until when probes admitted by the snapshotting process may still run, in epoch milliseconds (the
   * latest of their deadlines); null when none was running, and in every other state. Absent from snapshots of
   * keel versions before it existed, which restore as if a probe had just been admitted (see {@link BreakerStore}).
   */
  readonly probesUntilMs?: number | null;
  /**
   * While open or half-open: the failure that last opened the breaker, from `serializeError` (secrets redacted); null
   * when not known, and in every other state.
   */
  readonly cause?: SerializedError | null;
};

/** Checks that `value` is a {@link BreakerSnapshot}; throws `config.invalid` naming the faulty field otherwise. */
export function parseBreakerSnapshot(value: unknown): BreakerSnapshot {
  const fail = (field: string, expected: string, got: unknown): never => {
    throw new KeelError(
      'config.invalid',
      `circuitBreaker: initialState.${field} must be ${expected}, got ${describe(got)}; ` +
        'pass a value returned by breaker.toJSON()',
      { data: { option: 'initialState', field } },
    );
  };
  if (!isJsonObject(value)) return fail('(itself)', 'an object from breaker.toJSON()', value);
  if (value.version !== 1) fail('version', '1', value.version);
  const state = value.state as BreakerState;
  if (!STATES.includes(state)) fail('state', STATES.map((item) => `"${item}"`).join(' or '), value.state);
  const openUntilMs = value.openUntilMs;
  if (state === 'open' ? !Number.isFinite(openUntilMs) : openUntilMs !== null && openUntilMs !== undefined) {
    fail(
      'openUntilMs',
      state === 'open' ? 'a number of epoch milliseconds' : 'null unless state is "open"',
      openUntilMs,
    );
  }
  if (!isCount(value.consecutiveOpens)) fail('consecutiveOpens', 'an integer >= 0', value.consecutiveOpens);
  if (!isCount(value.probeSuccesses)) fail('probeSuccesses', 'an integer >= 0', value.probeSuccesses);
  if (typeof value.strategy !== 'string') fail('strategy', 'a string', value.strategy);
  const probesUntilMs = value.probesUntilMs;
  if (
    probesUntilMs !== undefined &&
    probesUntilMs !== null &&
    (state !== 'half-open' || !Number.isFinite(probesUntilMs))
  ) {
    fail(
      'probesUntilMs',
      state === 'half-open' ? 'a number of epoch milliseconds or null' : 'null unless state is "half-open"',
      probesUntilMs,
    );
  }
  const cause = value.cause;
  if (cause !== undefined && cause !== null && !isJsonObject(cause)) {
    fail('cause', 'a serialised error (an object from serializeError) or null', cause);
  }
  return {
    version: 1,
    state,
    openUntilMs: state === 'open' ? (openUntilMs as number) : null,
    consecutiveOpens: value.consecutiveOpens as number,
    probeSuccesses: value.probeSuccesses as number,
    strategy: value.strategy as string,
    window: value.window ?? null,
    probesUntilMs: probesUntilMs as number | null | undefined,
    cause: cause === undefined ? undefined : (cause as unknown as SerializedError | null),
  };
}
