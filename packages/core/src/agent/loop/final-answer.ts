import { type JsonValue, KeelError } from '../../errors/keel-error.js';
import type { ModelResponse } from '../../spec/model.js';
import type { CorrectionEventKind } from '../../spec/run-events.js';
import { runGuardrails } from '../guardrails/guardrail.js';
import { countCorrection } from '../run/report.js';
import type { RunContext } from '../run/run-context.js';

/** What the loop does with an answer that has no tool calls. */
export type FinalAnswerOutcome =
  | { readonly kind: 'complete'; readonly output: unknown }
  | { readonly kind: 'again' }
  | { readonly kind: 'fail'; readonly error: KeelError };

const AGAIN: FinalAnswerOutcome = Object.freeze({ kind: 'again' });

/** Sent when an answer was cut at the output token limit and `onMaxTokens` is `continue`. */
export const CONTINUE_PROMPT =
  'Your previous answer was cut off at the output token limit. Continue exactly where it stopped, without repeating anything.';

/**
 * Settles an answer without tool calls: a cut answer (`length`) fails with `provider.max_tokens` (partial output in
 * `data.partialOutput`) or, with `onMaxTokens: 'continue'`, asks the model to continue (bounded by
 * `limits.maxContinuations`); structured output is parsed and validated, its errors sent back to the model (bounded
 * by `limits.maxOutputCorrections`, then `output.invalid`); output guardrails block (`guardrail.output`) or redact.
 */
export async function settleFinalAnswer(
  run: RunContext,
  response: ModelResponse,
): Promise<FinalAnswerOutcome> {
  const { state, agent } = run;
  if (response.finishReason === 'length') {
    if (agent.onMaxTokens === 'continue' && state.continuations < agent.limits.maxContinuations) {
      state.partialOutput += response.content;
      state.continuations++;
      return askAgain(
        run,
        'continue_output',
        CONTINUE_PROMPT,
        'The answer was cut at the output token limit',
      );
    }
    return { kind: 'fail', error: maxTokensError(run, state.partialOutput + response.content) };
  }
  if (response.finishReason === 'content_filter') {
    return {
      kind: 'fail',
      error: new KeelError(
        'provider.content_filter',
        `${modelKey(run)} withheld its answer (finish reason "content_filter")`,
        {
          guidance: "The provider's content filter refused the answer: rephrase the request.",
        },
      ),
    };
  }
  let text = state.partialOutput + response.content;
  state.partialOutput = '';
  state.continuations = 0;

  if (agent.output !== undefined) {
    const parsed = await agent.output.parse(text);
    if (!parsed.success) {
      run.countError(parsed.error);
      if (state.outputCorrections >= agent.limits.maxOutputCorrections)
        return { kind: 'fail', error: parsed.error };
      state.outputCorrections++;
      return askAgain(
        run,
        'invalid_output',
        parsed.error.guidance ?? parsed.error.message,
        parsed.error.message,
      );
    }
  }

  if (agent.hasGuardrails.output) {
    const checked = await runGuardrails(agent.guardrails, 'output', text, {
      runId: state.runId,
      step: state.step,
      signal: run.abort.signal,
    });
    for (const finding of checked.findings) run.guardrailTripped(finding);
    if (checked.action === 'block') return { kind: 'fail', error: checked.error };
    if (checked.text !== text) {
      text = checked.text;
      const last = state.messages[state.messages.length - 1];
      if (last?.role === 'assistant') state.messages[state.messages.length - 1] = { ...last, content: text };
    }
  }

  if (agent.output === undefined) return { kind: 'complete', output: text };
  // Parsed again after any redaction, so that the output is what the guardrails let through.
  const final = await agent.output.parse(text);
  return final.success ? { kind: 'complete', output: final.value } : { kind: 'fail', error: final.error };
}

function askAgain(
  run: RunContext,
  kind: CorrectionEventKind,
  prompt: string,
  message: string,
): FinalAnswerOutcome {
  run.state.messages.push({ role: 'user', content: prompt });
  countCorrection(run.state.report, kind);
  if (run.events.active) {
    run.events.emit({
      type: 'correction',
      runId: run.runId,
      atMs: run.clock.now(),
      step: run.state.step,
      kind,
      message,
    });
  }
  return AGAIN;
}

function maxTokensError(run: RunContext, partialOutput: string): KeelError {
  const data: Record<string, JsonValue> = { partialOutput, continuations: run.state.continuations };
  return new KeelError(
    'provider.max_tokens',
    `${modelKey(run)} stopped at its output token limit (finish reason "length")`,
    {
      provider: run.agent.models[run.state.modelIndex]!.provider.provider,
      data,
      guidance:
        "Raise the model's maxOutputTokens, ask for a shorter answer, or set onMaxTokens: 'continue'.",
    },
  );
}

function modelKey(run: RunContext): string {
  return run.agent.models[run.state.modelIndex]!.key;
}
