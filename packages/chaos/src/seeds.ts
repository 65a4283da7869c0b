import { randomAt } from '@keel/simulated';

/**
 * A 32-bit seed made from `parts` (FNV-1a over their text), so that each scenario, run and tool draws from a stream
 * of its own: the same parts always give the same seed, and adding a scenario shifts no other's faults.
 */
export function seedOf(...parts: readonly (string | number)[]): number {
  let hash = 0x811c9dc5;
  for (const character of parts.join('\u0000')) {
    hash ^= character.codePointAt(0)!;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** The random number in [0, 1) at position `index` of the stream seeded by `parts`. */
export function drawAt(index: number, ...parts: readonly (string | number)[]): number {
  return randomAt(seedOf(...parts), index);
}

/** The identifier of run `index` of a scenario: the same for every subject, so runs line up across them. */
export function runIdOf(scenario: string, seed: number, index: number): string {
  return `chaos-${scenario}-${seed}-${index}`;
}

/**
 * The chaos run that a run belongs to: `runId` itself, or, for a child run a framework started inside it, the chaos
 * run's id that begins it. Chaos run ids have no `:` or `/`, and frameworks derive a child's id from its parent's (keel:
 * `<parent run id>:<step>:<call>/<tool>`), so the id is cut at the first of them. Effects and tool faults count per
 * chaos run, so that a child's side effects line up across subjects.
 */
export function chaosRunOf(runId: string): string {
  const cut = runId.search(/[:/]/);
  return cut === -1 ? runId : runId.slice(0, cut);
}
