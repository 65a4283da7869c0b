import { seededRandom, seedOf } from './prng.js';

/** A tool of the crash test: every call appends one line to the side-effect file. */
export interface CrashToolSpec {
  readonly name: string;
  readonly idempotent: boolean;
}

/** Three tools whose effect must never happen twice, one that may. */
export const CRASH_TOOLS: readonly CrashToolSpec[] = [
  { name: 'charge_card', idempotent: false },
  { name: 'send_mail', idempotent: false },
  { name: 'open_ticket', idempotent: false },
  { name: 'lookup_price', idempotent: true },
];

/** One planned tool call: `callId` is the model's id, never the idempotency key. */
export interface PlannedCall {
  readonly callId: string;
  readonly toolName: string;
  readonly idempotent: boolean;
}

/** What a run's model does: steps 1..steps.length call tools, the next step answers. */
export interface CrashPlan {
  readonly runId: string;
  readonly steps: readonly (readonly PlannedCall[])[];
}

/**
 * A run's plan, fixed by its id alone, so the child (which plays the model) and the test (which checks the outcome)
 * agree without talking: 3 to 5 tool steps of 1 to 3 calls each, then a final answer (4 to 6 model steps).
 */
export function crashPlan(runId: string): CrashPlan {
  const random = seededRandom(seedOf(runId));
  const stepCount = random.integer(3, 5);
  const steps: PlannedCall[][] = [];
  for (let step = 1; step <= stepCount; step++) {
    const callCount = random.integer(1, 3);
    const calls: PlannedCall[] = [];
    for (let callIndex = 0; callIndex < callCount; callIndex++) {
      const spec = CRASH_TOOLS[random.integer(0, CRASH_TOOLS.length - 1)]!;
      calls.push({ callId: `call_${step}_${callIndex}`, toolName: spec.name, idempotent: spec.idempotent });
    }
    steps.push(calls);
  }
  return { runId, steps };
}

/** The idempotency key keel derives for a call: `${runId}:${step}:${callIndex}` (step from 1, call index from 0). */
export function expectedKey(runId: string, step: number, callIndex: number): string {
  return `${runId}:${step}:${callIndex}`;
}

/** One line of the side-effect file, as a tool appends it. */
export function effectLine(idempotencyKey: string, toolName: string, idempotent: boolean): string {
  return `${idempotencyKey}\t${toolName}\t${idempotent ? 'idempotent' : 'non-idempotent'}\n`;
}

/** The child's exit code when `resume` finds no such run (it was killed before the run was recorded): start it again. */
export const EXIT_RUN_NOT_FOUND = 3;

/** The child's exit code when another owner holds the run's lease (`store.conflict`); it prints the code as JSON too. */
export const EXIT_CONFLICT = 4;

/** What the harness tells a child beyond its mode and run id: the child's last argument, as JSON. */
export interface ChildSettings {
  /** Answers for uncertain calls, by idempotency key. Defaults to none. */
  decisions?: Record<string, 'execute' | 'abandon'>;
  /**
   * The lease owner. Defaults to `crash-worker:<runId>`: one owner per run, as a restarted worker with a stable
   * identity would have (it takes its own lease back at once).
   */
  owner?: string;
  /** The lease's time to live, in milliseconds. Defaults to the agent's (30_000). */
  leaseTtlMs?: number;
  /**
   * Keeps a lease just taken this long before going on, so that a rival resuming at the same moment surely finds it
   * held. Defaults to 0.
   */
  holdLeaseMs?: number;
  /** Prints a `ready` line once set up, then waits for a line on stdin before it runs or resumes. Defaults to false. */
  waitForGo?: boolean;
  /**
   * Makes the run a tree: its first tool step also calls `delegate`, an agent tool whose child run (id
   * `<runId>:1:<n>/delegate`) follows a crash plan of its own, with the same tools. Defaults to false.
   */
  nested?: boolean;
}

/** The agent tool of a nested crash run. */
export const DELEGATE_TOOL = 'delegate';

/** The id of a nested crash run's child: the agent tool's call comes after the planned calls of step 1. */
export function delegateRunId(runId: string): string {
  return `${expectedKey(runId, 1, crashPlan(runId).steps[0]!.length)}/${DELEGATE_TOOL}`;
}
