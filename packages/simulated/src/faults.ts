import { optionError, rejectUnknownOptions } from '@keel/core/adapter';
import { randomAt } from './prng.js';

/** Every fault kind the simulated server can inject, in the order rates are drawn. */
export const FAULT_KINDS = [
  'none',
  'rate_limit',
  'server_error',
  'bad_gateway',
  'unavailable',
  'overloaded',
  'hang',
  'reset',
  'truncated_json',
  'malformed_json',
  'invalid_tool_arguments',
  'unknown_tool',
  'context_overflow',
  'max_tokens',
  'stream_cut',
  'stall',
  'slow_drip',
  'empty_stream',
] as const;

/**
 * What the simulated server does to one request:
 * - `none`: answers normally.
 * - `rate_limit`: 429 with `retry-after-ms` and `retry-after` (whole seconds) headers.
 * - `server_error` 500, `bad_gateway` 502 (an HTML body, as proxies send), `unavailable` 503, `overloaded` 529.
 * - `hang`: sends nothing; the client's abort, the server closing or, with `hangMs`, the server cutting the connection
 *   (as a proxy's idle timeout does) ends the request.
 * - `reset`: sends the headers and part of the body, then resets the connection.
 * - `truncated_json`: a 200 whose JSON body (or event stream) stops half way.
 * - `malformed_json`: a 200 whose body is not JSON.
 * - `invalid_tool_arguments`: a tool call whose `arguments` are not valid JSON.
 * - `unknown_tool`: a tool call naming a tool the request did not offer.
 * - `context_overflow`: 400 with `error.code` `context_length_exceeded`.
 * - `max_tokens`: `finish_reason` `length` with partial content.
 * - `stream_cut`: a streamed answer cut (TCP reset) at a random byte offset of its events, drawn from the schedule's
 *   seed and the request's position: inside the text, inside a tool call's arguments, between events. Unstreamed: as
 *   `reset`.
 * - `stall`: the headers and part of a streamed answer (a random byte offset, as `stream_cut`), then silence until the
 *   client gives up or, with `hangMs`, the server cuts the connection. Unstreamed: as `hang`.
 * - `slow_drip`: a streamed answer whole, one event every 100 ms (a slow but live stream, which must not be cut).
 *   Unstreamed: answers normally.
 * - `empty_stream`: a 200 with no answer in it: `data: {"choices":[]}` then `data: [DONE]` (unstreamed: a body whose
 *   `choices` is empty).
 */
export type FaultKind = (typeof FAULT_KINDS)[number];

/** When the simulated server injects which fault. */
export interface FaultSchedule {
  /** Seed of the PRNG that draws faults from `rates`. The same seed always gives the same schedule. Defaults to 1. */
  seed?: number;
  /** Probability, per request, of each fault kind; they must add up to at most 1. Defaults to no faults. */
  rates?: Partial<Record<FaultKind, number>>;
  /**
   * Faults for the first requests, by position (request 0 gets `sequence[0]`); requests past its end draw from
   * `rates`. Positions count the requests for one model. Defaults to empty.
   */
  sequence?: readonly FaultKind[];
  /**
   * The wait a `rate_limit` asks for, sent as `retry-after-ms` and, in whole seconds rounded down, `retry-after`.
   * Defaults to 1000.
   */
  retryAfterMs?: number;
  /**
   * How long a `hang` lasts before the server resets the connection without having sent a byte, as a load balancer's
   * idle timeout would. Defaults to forever (only the client or `close()` ends it).
   */
  hangMs?: number;
}

// A record over the interface, so that adding a field without listing it here fails to compile.
const SCHEDULE_KEYS = Object.keys({
  seed: true,
  rates: true,
  sequence: true,
  retryAfterMs: true,
  hangMs: true,
} satisfies Record<keyof FaultSchedule, true>);

/** True when `value` is a fault kind. */
export function isFaultKind(value: unknown): value is FaultKind {
  return typeof value === 'string' && (FAULT_KINDS as readonly string[]).includes(value);
}

/**
 * Checks a fault schedule and throws a `config.invalid` KeelError that says what to fix: unknown kinds, rates
 * outside [0, 1] or adding up to more than 1, a seed that is not an integer, a negative `retryAfterMs`.
 */
export function validateFaultSchedule(schedule: FaultSchedule, where = 'fault schedule'): FaultSchedule {
  if (typeof schedule !== 'object' || schedule === null || Array.isArray(schedule)) {
    throw optionError({
      where: 'faults',
      option: 'options',
      message: `${where} must be an object such as { rates: { rate_limit: 0.2 } }, got ${typeof schedule}`,
      prefixWhere: false,
    });
  }
  rejectUnknownOptions(schedule, SCHEDULE_KEYS, { where: where });
  const { seed, rates, sequence, retryAfterMs, hangMs } = schedule;
  if (seed !== undefined && !Number.isSafeInteger(seed)) {
    throw optionError({
      where: 'faults',
      option: 'options',
      message: `${where}: seed must be an integer, got ${String(seed)}`,
      prefixWhere: false,
    });
  }
  if (retryAfterMs !== undefined && !(Number.isFinite(retryAfterMs) && retryAfterMs >= 0)) {
    throw optionError({
      where: 'faults',
      option: 'options',
      message: `${where}: retryAfterMs must be a number of milliseconds >= 0, got ${String(retryAfterMs)}`,
      prefixWhere: false,
    });
  }
  if (hangMs !== undefined && !(Number.isFinite(hangMs) && hangMs >= 0)) {
    throw optionError({
      where: 'faults',
      option: 'options',
      message: `${where}: hangMs must be a number of milliseconds >= 0, got ${String(hangMs)}`,
      prefixWhere: false,
    });
  }
  if (rates !== undefined) {
    if (typeof rates !== 'object' || rates === null)
      throw optionError({
        where: 'faults',
        option: 'options',
        message: `${where}: rates must be an object`,
        prefixWhere: false,
      });
    let total = 0;
    for (const [kind, rate] of Object.entries(rates)) {
      if (!isFaultKind(kind))
        throw optionError({
          where: 'faults',
          option: 'options',
          message: `${where}: unknown fault kind "${kind}"; known kinds: ${knownKinds()}`,
          prefixWhere: false,
        });
      if (typeof rate !== 'number' || !(rate >= 0 && rate <= 1)) {
        throw optionError({
          where: 'faults',
          option: 'options',
          message: `${where}: the rate of ${kind} must be a number from 0 to 1, got ${String(rate)}`,
          prefixWhere: false,
        });
      }
      if (kind !== 'none') total += rate;
    }
    if (total > 1 + 1e-9) {
      throw optionError({
        where: 'faults',
        option: 'options',
        message: `${where}: fault rates add up to ${round(total)}, more than 1; lower some of them`,
        prefixWhere: false,
      });
    }
  }
  if (sequence !== undefined) {
    if (!Array.isArray(sequence))
      throw optionError({
        where: 'faults',
        option: 'options',
        message: `${where}: sequence must be an array of fault kinds`,
        prefixWhere: false,
      });
    sequence.forEach((kind, index) => {
      if (!isFaultKind(kind)) {
        throw optionError({
          where: 'faults',
          option: 'options',
          message: `${where}: sequence[${index}] is "${String(kind)}", not a fault kind; known kinds: ${knownKinds()}`,
          prefixWhere: false,
        });
      }
    });
  }
  return schedule;
}

/** The fault that `schedule` assigns to the request at `index` (0-based, counted per model). A pure function. */
export function scheduledFault(schedule: FaultSchedule, index: number): FaultKind {
  const { sequence = [], rates } = schedule;
  if (index < sequence.length) return sequence[index]!;
  if (rates === undefined) return 'none';
  const draw = randomAt(schedule.seed ?? 1, index);
  let cumulative = 0;
  for (const kind of FAULT_KINDS) {
    if (kind === 'none') continue;
    cumulative += rates[kind] ?? 0;
    if (draw < cumulative) return kind;
  }
  return 'none';
}

/** The first `count` faults of `schedule`, for previews (`keel chaos`) and tests. */
export function planFaults(schedule: FaultSchedule, count: number): FaultKind[] {
  validateFaultSchedule(schedule);
  return Array.from({ length: count }, (_, index) => scheduledFault(schedule, index));
}

/** A zeroed count per fault kind. */
export function emptyFaultCounts(): Record<FaultKind, number> {
  return Object.fromEntries(FAULT_KINDS.map((kind) => [kind, 0])) as Record<FaultKind, number>;
}

function knownKinds(): string {
  return FAULT_KINDS.join(', ');
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
