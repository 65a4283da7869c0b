import { appendFileSync, readFileSync } from 'node:fs';

/**
 * One execution of a tool call: `started` just before its body runs (from there on its side effect may happen),
 * `completed` once it returned (the effect happened); or `absent`: the tool's own `reconcile` looked the call up by
 * its idempotency key and found no effect (its executions that never completed had none); or `found`: it found the
 * effect (an execution killed before it could record its end had completed it).
 */
export interface EffectRecord {
  readonly phase: 'started' | 'completed' | 'absent' | 'found';
  readonly runId: string;
  readonly tool: string;
  /** The call's identity: run, tool and canonical arguments. The same call asked for again has the same key. */
  readonly key: string;
  /** Whether the tool declares that running it twice is harmless. */
  readonly idempotent: boolean;
  /** The idempotency key the execution was handed (absent in ledgers written before it was recorded). */
  readonly idempotencyKey?: string;
  readonly atMs: number;
}

/**
 * Appends effects to a JSON-lines file, synchronously, so that a worker process killed with SIGKILL loses none it
 * had recorded and the parent reads them all afterwards.
 */
export class EffectLedger {
  constructor(readonly path: string) {}

  record(effect: EffectRecord): void {
    appendFileSync(this.path, `${JSON.stringify(effect)}\n`);
  }

  /** Every effect recorded so far; a line cut short by a kill is skipped. */
  read(): EffectRecord[] {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const records: EffectRecord[] = [];
    for (const line of text.split('\n')) {
      if (line === '') continue;
      try {
        records.push(JSON.parse(line) as EffectRecord);
      } catch {
        // The last line of a killed writer.
      }
    }
    return records;
  }
}

/**
 * Side effects risked twice: each execution of a call of a tool that is not idempotent that started after an earlier
 * execution of the same call had started (and so may have had its effect). Executions refused before the tool's body
 * ran (an injected 503, a hang cut short) never started and do not count; nor does an execution that never completed
 * (its process was killed in it) once the tool's `reconcile` found that its idempotency key had no effect (`absent`):
 * the suite trusts the tool's lookup (the built-in `create_ticket`'s reads the outbox its execution writes).
 */
export function duplicateEffects(effects: readonly EffectRecord[]): number {
  const live = new Map<string, number>();
  const unfinished = new Map<string, { key: string; count: number }>();
  let duplicates = 0;
  for (const effect of effects) {
    if (effect.idempotent) continue;
    const byKey = effect.idempotencyKey === undefined ? undefined : unfinished.get(effect.idempotencyKey);
    if (effect.phase === 'started') {
      const earlier = live.get(effect.key) ?? 0;
      if (earlier > 0) duplicates++;
      live.set(effect.key, earlier + 1);
      if (effect.idempotencyKey !== undefined) {
        unfinished.set(effect.idempotencyKey, { key: effect.key, count: (byKey?.count ?? 0) + 1 });
      }
    } else if (effect.phase === 'completed') {
      if (byKey !== undefined && byKey.count > 0) byKey.count--;
    } else if (effect.phase === 'absent' && byKey !== undefined && byKey.count > 0) {
      live.set(byKey.key, Math.max(0, (live.get(byKey.key) ?? 0) - byKey.count));
      byKey.count = 0;
    }
  }
  return duplicates;
}

/** The executions that ran to their end. */
export function completedEffects(effects: readonly EffectRecord[]): EffectRecord[] {
  return effects.filter((effect) => effect.phase === 'completed');
}

/**
 * The calls whose effect happened: executions that ran to their end, and executions that never recorded their end
 * (their process was killed) whose effect the tool's `reconcile` then found under their idempotency key (`found`).
 */
export function effectsThatHappened(effects: readonly EffectRecord[]): EffectRecord[] {
  const found = new Set(
    effects.flatMap((effect) =>
      effect.phase === 'found' && effect.idempotencyKey !== undefined ? [effect.idempotencyKey] : [],
    ),
  );
  return effects.filter(
    (effect) =>
      effect.phase === 'completed' ||
      (effect.phase === 'started' && effect.idempotencyKey !== undefined && found.has(effect.idempotencyKey)),
  );
}

/** JSON with object keys sorted, so that equal arguments always give the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
