import { isControlSignal } from '../../errors/control.js';
import { messageOf } from '../../errors/error-chain.js';
import { type JsonValue, KeelError } from '../../errors/keel-error.js';
import type { ToolCall } from '../../spec/model.js';

export type { GuardrailStage, GuardrailTrigger } from '../../spec/guardrail.js';

import type { GuardrailStage, GuardrailTrigger } from '../../spec/guardrail.js';

/** What a guardrail is told besides the text or call it checks. */
export interface GuardrailContext {
  runId: string;
  /** The step being checked; 0 for the input. */
  step: number;
  /** Aborted when the run is cancelled; a guardrail that calls a model or a service should pass it on. */
  signal: AbortSignal;
}

/** A guardrail's verdict. */
export type GuardrailResult =
  | { action: 'allow' }
  /** Stop: the input is refused, the output withheld, or the tool call refused. */
  | { action: 'block'; trigger: GuardrailTrigger; message: string; data?: Record<string, JsonValue> }
  /** Go on with `text` in place of what was checked (for a tool call: its arguments text). */
  | { action: 'redact'; trigger: GuardrailTrigger; text: string; data?: Record<string, JsonValue> };

/** A guardrail over text: the user's input or the model's final output. */
export interface TextGuardrail {
  readonly name: string;
  readonly stage: 'input' | 'output';
  check(text: string, context: GuardrailContext): GuardrailResult | Promise<GuardrailResult>;
}

/** A guardrail over a tool call, run before the call executes. */
export interface ToolCallGuardrail {
  readonly name: string;
  readonly stage: 'tool-call';
  check(call: ToolCall, context: GuardrailContext): GuardrailResult | Promise<GuardrailResult>;
}

/** An input, output or tool-call check. */
export type Guardrail = TextGuardrail | ToolCallGuardrail;

const STAGES: readonly GuardrailStage[] = ['input', 'output', 'tool-call'];
const TRIGGERS: readonly GuardrailTrigger[] = [
  'prompt_injection',
  'pii_detected',
  'off_topic',
  'input_not_allowed',
  'output_not_allowed',
  'validation_failed',
];

/**
 * Defines a guardrail, checking its options (`config.invalid` on a missing name, an unknown stage or a missing
 * `check`).
 *
 * @example
 *   const onTopic = guardrail({
 *     name: 'on-topic',
 *     stage: 'input',
 *     check: (text) =>
 *       /weather|forecast/i.test(text)
 *         ? { action: 'allow' }
 *         : { action: 'block', trigger: 'off_topic', message: 'This assistant only answers weather questions.' },
 *   });
 */
export function guardrail(options: TextGuardrail): TextGuardrail;
export function guardrail(options: ToolCallGuardrail): ToolCallGuardrail;
export function guardrail(options: Guardrail): Guardrail {
  if (typeof options !== 'object' || options === null) {
    throw new KeelError('config.invalid', 'guardrail() needs an options object with name, stage and check');
  }
  if (typeof options.name !== 'string' || options.name.trim() === '') {
    throw new KeelError(
      'config.invalid',
      'a guardrail needs a non-empty name (it appears in errors and the report)',
    );
  }
  if (!STAGES.includes(options.stage)) {
    throw new KeelError(
      'config.invalid',
      `guardrail "${options.name}": stage must be one of ${STAGES.join(', ')}`,
    );
  }
  if (typeof options.check !== 'function') {
    throw new KeelError('config.invalid', `guardrail "${options.name}" needs a check function`);
  }
  return Object.freeze({ ...options });
}

/** One intervention, for events and the run's report. Never holds the checked text itself. */
export interface GuardrailFinding {
  guardrail: string;
  stage: GuardrailStage;
  action: 'block' | 'redact';
  trigger: GuardrailTrigger;
  data?: Record<string, JsonValue>;
}

/** What running a stage's guardrails decided. */
export type GuardrailOutcome =
  | {
      action: 'allow';
      /** The text (for a tool call: the arguments text) after any redactions; the original when none. */
      text: string;
      /** Every redaction applied, in order. */
      findings: GuardrailFinding[];
    }
  | {
      action: 'block';
      /**
       * `guardrail.input` or `guardrail.output` (the loop ends the run with it), or for a tool call
       * `tool.permission_denied` with guidance (the loop shows it to the model as the call's result).
       */
      error: KeelError;
      findings: GuardrailFinding[];
    };

/**
 * Runs the guardrails of `stage` (others in the list are skipped) over `text`, in order: each sees the text as
 * earlier redactions left it; the first block ends the check. A guardrail that throws or returns something invalid
 * blocks (fail closed, trigger `validation_failed`, the thrown value as the error's cause); control signals and
 * cancellation are rethrown as they are.
 */
export async function runGuardrails(
  guardrails: readonly Guardrail[],
  stage: 'input' | 'output',
  text: string,
  context: GuardrailContext,
): Promise<GuardrailOutcome> {
  const selected = guardrails.filter((entry): entry is TextGuardrail => entry.stage === stage);
  return runStage(selected, stage, text, context, (entry, current) => entry.check(current, context));
}

/**
 * Runs the `tool-call` guardrails over a call before it executes. A redaction replaces the call's arguments text;
 * a block yields a `tool.permission_denied` error whose guidance tells the model the call was refused.
 */
export async function runToolCallGuardrails(
  guardrails: readonly Guardrail[],
  call: ToolCall,
  context: GuardrailContext,
): Promise<GuardrailOutcome> {
  const selected = guardrails.filter((entry): entry is ToolCallGuardrail => entry.stage === 'tool-call');
  return runStage(selected, 'tool-call', call.arguments, context, (entry, current) =>
    entry.check({ ...call, arguments: current }, context),
  );
}

async function runStage<G extends Guardrail>(
  selected: readonly G[],
  stage: GuardrailStage,
  text: string,
  context: GuardrailContext,
  check: (entry: G, current: string) => GuardrailResult | Promise<GuardrailResult>,
): Promise<GuardrailOutcome> {
  const findings: GuardrailFinding[] = [];
  let current = text;
  for (const entry of selected) {
    if (context.signal.aborted) throw context.signal.reason;
    let result: GuardrailResult;
    try {
      result = await check(entry, current);
    } catch (error) {
      // Cancellation wins over whatever the guardrail threw on its way out; control signals pass untouched.
      if (context.signal.aborted) throw context.signal.reason;
      if (isControlSignal(error)) throw error;
      const finding: GuardrailFinding = {
        guardrail: entry.name,
        stage,
        action: 'block',
        trigger: 'validation_failed',
      };
      findings.push(finding);
      const reason = messageOf(error);
      return {
        action: 'block',
        error: blockError(finding, `guardrail "${entry.name}" failed: ${reason}`, error),
        findings,
      };
    }
    const problem = resultProblem(result);
    if (problem !== undefined) {
      const finding: GuardrailFinding = {
        guardrail: entry.name,
        stage,
        action: 'block',
        trigger: 'validation_failed',
      };
      findings.push(finding);
      return {
        action: 'block',
        error: blockError(finding, `guardrail "${entry.name}" returned ${problem}`),
        findings,
      };
    }
    if (result.action === 'allow') continue;
    const finding: GuardrailFinding = {
      guardrail: entry.name,
      stage,
      action: result.action,
      trigger: result.trigger,
    };
    if (result.data !== undefined) finding.data = result.data;
    findings.push(finding);
    if (result.action === 'block')
      return { action: 'block', error: blockError(finding, result.message), findings };
    current = result.text;
  }
  return { action: 'allow', text: current, findings };
}

function resultProblem(result: unknown): string | undefined {
  if (typeof result !== 'object' || result === null)
    return 'no result (expected { action: "allow" | "block" | "redact" })';
  const { action, trigger, message, text } = result as Record<string, unknown>;
  if (action === 'allow') return undefined;
  if (action !== 'block' && action !== 'redact') return `an unknown action ${JSON.stringify(action)}`;
  if (!TRIGGERS.includes(trigger as GuardrailTrigger)) return `an unknown trigger ${JSON.stringify(trigger)}`;
  if (action === 'block' && typeof message !== 'string') return 'a block without a message';
  if (action === 'redact' && typeof text !== 'string') return 'a redaction without replacement text';
  return undefined;
}

function blockError(finding: GuardrailFinding, message: string, cause?: unknown): KeelError {
  const data: Record<string, JsonValue> = { guardrail: finding.guardrail, trigger: finding.trigger };
  if (finding.data !== undefined) data.details = finding.data;
  if (finding.stage === 'tool-call') {
    return new KeelError(
      'tool.permission_denied',
      `Tool call refused by guardrail "${finding.guardrail}": ${message}`,
      {
        data,
        cause,
        guidance: `This call was refused by the guardrail "${finding.guardrail}" (${finding.trigger}): ${message}. Do not repeat it; continue without it or answer the user.`,
      },
    );
  }
  const code = finding.stage === 'input' ? 'guardrail.input' : 'guardrail.output';
  return new KeelError(
    code,
    `Guardrail "${finding.guardrail}" blocked the ${finding.stage} (${finding.trigger}): ${message}`,
    {
      data,
      cause,
    },
  );
}
