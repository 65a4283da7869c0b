import type { PendingDecision, RunEvent, RunEventListener, RunReport, RunResult } from '@keel/core';
import { type Output, paint } from './output.js';

/** Prints run events as they happen, one line each: what a person watching a run wants to see. */
export function renderEvent(event: RunEvent, output: Output): void {
  const step = 'step' in event ? paint(output, 'grey', `step ${event.step}`.padEnd(8)) : ''.padEnd(8);
  switch (event.type) {
    case 'model-call-end':
      if (event.outcome === 'success') {
        output.out(
          `${step}${paint(output, 'green', '✓')} model ${event.model} answered (${event.finishReason}, ${event.durationMs} ms)`,
        );
      } else {
        output.out(
          `${step}${paint(output, 'red', '✗')} model ${event.model} failed: ${paint(output, 'red', event.errorCode ?? 'error')}`,
        );
      }
      return;
    case 'retry-scheduled':
      output.out(
        `${step}${paint(output, 'yellow', '↻')} retry ${event.target} ${event.name} after ${event.errorCode} in ${Math.round(event.delayMs)} ms (attempt ${event.attempt} failed)`,
      );
      return;
    case 'fallback-used':
      output.out(
        `${step}${paint(output, 'magenta', '⇢')} fallback ${event.from} → ${event.to} after ${event.errorCode}`,
      );
      return;
    case 'breaker-opened':
    case 'breaker-half-opened':
    case 'breaker-closed':
      output.out(
        `${''.padEnd(8)}${paint(output, 'magenta', '◆')} ${event.type.replace('-', ' ')}: ${event.target} ${event.name}`,
      );
      return;
    case 'tool-call-end':
      output.out(
        event.status === 'success'
          ? `${step}${paint(output, 'green', '✓')} tool ${event.toolName} (${event.durationMs} ms)`
          : `${step}${paint(output, 'red', '✗')} tool ${event.toolName} failed: ${event.errorCode} (sent to the model as data)`,
      );
      return;
    case 'tool-degraded':
      output.out(
        `${step}${paint(output, 'yellow', '⇢')} tool ${event.toolName} degraded to ${event.fallback} after ${event.errorCode}`,
      );
      return;
    case 'correction':
      output.out(`${step}${paint(output, 'cyan', '✎')} correction (${event.kind}): ${event.message}`);
      return;
    case 'guardrail-tripped':
      output.out(
        `${step}${paint(output, 'red', '⛨')} guardrail ${event.guardrail} (${event.stage}) ${event.action}: ${event.trigger}`,
      );
      return;
    case 'handoff':
      output.out(`${step}${paint(output, 'magenta', '⇢')} handoff ${event.from} → ${event.to}`);
      return;
    case 'context-reduced':
      output.out(
        `${step}${paint(output, 'cyan', '⇣')} context reduced from ${event.messagesBefore} to ${event.messagesAfter} messages`,
      );
      return;
    default:
      return;
  }
}

/** Prints how a run ended and its report. A run that waits for decisions is shown waiting, with the command that answers it. */
export function renderResult(result: RunResult<unknown>, output: Output): void {
  const colour = result.status === 'completed' ? 'green' : result.status === 'failed' ? 'red' : 'yellow';
  output.out('');
  output.out(
    `${paint(output, colour, paint(output, 'bold', result.status))} (stop reason: ${result.stopReason})`,
  );
  if (isWaiting(result)) {
    for (const line of waitingLines(result.runId, result.pending ?? [], result.error?.message, output))
      output.out(line);
  } else if (result.error !== undefined) {
    output.out(`${paint(output, 'red', result.error.code)}: ${result.error.message}`);
    if (result.error.guidance !== undefined) output.out(`guidance: ${result.error.guidance}`);
  }
  if (result.output !== undefined) {
    output.out('');
    output.out(typeof result.output === 'string' ? result.output : JSON.stringify(result.output, null, 2));
  }
  output.out('');
  for (const line of reportLines(result.report)) output.out(line);
  output.out(
    paint(
      output,
      'grey',
      `run id ${result.runId}${result.resumable ? ` · resumable: ${resumeHint(result)}` : ' · not resumable'}`,
    ),
  );
}

/**
 * Whether a run is waiting rather than failed: interrupted with `run.interrupted` (for decisions, or paused at its
 * last checkpoint). Waiting is a state: it is shown with what answers it, never as an error.
 */
export function isWaiting(run: {
  status: string;
  error?: { code?: string | undefined } | undefined;
}): boolean {
  return run.status === 'interrupted' && (run.error === undefined || run.error.code === 'run.interrupted');
}

/** What a pending decision asks, in a few words, whatever its kind. */
export function decisionQuestion(decision: Pick<PendingDecision, 'kind' | 'repeatOf'>): string {
  if (decision.kind === 'approval') return 'needs approval';
  if (decision.kind === 'uncertain')
    return decision.repeatOf !== undefined
      ? `would repeat ${decision.repeatOf}, whose outcome is unknown: run it, or give it up`
      : 'may or may not have run: run it again, or give it up';
  return `waits for a decision (${String(decision.kind)})`;
}

/**
 * The lines that show a waiting run: each decision it waits for, then the command that answers them all; a run paused
 * with no decision (its worker stopped) gets the command that resumes it. `message` is the pause's own explanation.
 */
export function waitingLines(
  runId: string,
  pending: readonly PendingDecision[],
  message: string | undefined,
  output: Output,
): string[] {
  if (pending.length === 0) {
    return [
      `${paint(output, 'yellow', 'waiting')}  ${message ?? 'paused at its last checkpoint'}`,
      `answer   ${resumeCommandOf(runId, pending)}`,
    ];
  }
  const count = pending.length === 1 ? 'a decision' : `${pending.length} decisions`;
  return [
    `${paint(output, 'yellow', 'waiting')}  for ${count}:`,
    ...pending.map(
      (decision) =>
        `  ${decision.toolName} ${JSON.stringify(decision.arguments)} ${decisionQuestion(decision)}  (key ${decision.idempotencyKey})`,
    ),
    `answer   ${resumeCommandOf(runId, pending)}`,
  ];
}

/** The command that continues an interrupted run, with a flag for each decision it waits for. */
export function resumeHint(result: RunResult<unknown>): string {
  return resumeCommandOf(result.runId, result.pending ?? []);
}

/** `keel resume <id>` with the flags that answer each of `pending`: approve or reject, run again or abandon. */
export function resumeCommandOf(
  runId: string,
  pending: readonly Pick<PendingDecision, 'kind' | 'idempotencyKey'>[],
): string {
  const flags = pending.map((decision) =>
    decision.kind === 'approval'
      ? `--approve ${decision.idempotencyKey} (or --reject ${decision.idempotencyKey}=reason)`
      : `--execute ${decision.idempotencyKey} (or --abandon ${decision.idempotencyKey})`,
  );
  return ['keel resume', runId, ...flags].join(' ');
}

/** The result as JSON: the error serialised (redacted), the state left out (it repeats the messages). */
export function resultJson(result: RunResult<unknown>): Record<string, unknown> {
  return {
    runId: result.runId,
    status: result.status,
    stopReason: result.stopReason,
    ...(result.stopDetail === undefined ? {} : { stopDetail: result.stopDetail }),
    resumable: result.resumable,
    pending: result.pending ?? [],
    output: result.output ?? null,
    error: result.error?.toJSON() ?? null,
    usage: result.usage,
    report: result.report,
    messages: result.messages,
  };
}

/** The report as a few lines of text. */
export function reportLines(report: RunReport): string[] {
  const byModel = Object.entries(report.requests.byModel)
    .map(([model, count]) => `${model} ${count}`)
    .join(', ');
  const lines = [
    `report   steps ${report.steps} · requests ${report.requests.total}${byModel ? ` (${byModel})` : ''} · retries ${report.retries.total} (model ${report.retries.model}, tool ${report.retries.tool})`,
    `         fallbacks ${report.fallbacks.total} · breaker moves ${report.breakerTransitions.length} · corrections ${report.corrections.total} · context reductions ${report.contextReductions}`,
    `         tool calls ${report.toolCalls.total} (errors ${report.toolCalls.errors}) · waited ${Math.round(report.waitingMs)} ms · tokens in ${report.usage.inputTokens} out ${report.usage.outputTokens}${report.usage.reasoningTokens === undefined ? '' : ` (reasoning ${report.usage.reasoningTokens})`} · ${report.durationMs} ms`,
  ];
  if (report.promptCacheHitRate !== undefined) {
    const lost = report.fallbacks.used.filter((record) => record.promptCacheLost === true).length;
    lines.push(
      `cache    ${report.usage.cachedInputTokens ?? 0} input tokens read from the prompt cache (hit rate ${Math.round(report.promptCacheHitRate * 100)}%), ${report.usage.cacheWriteInputTokens ?? 0} written${lost > 0 ? ` · lost by ${lost} fallback${lost === 1 ? '' : 's'}` : ''}`,
    );
  }
  const cost = report.cost;
  if (cost !== undefined) {
    const byModel = Object.entries(cost.byModel).map(([model, usd]) => `${model} ${formatUsd(usd)}`);
    const unpriced = cost.unpricedCalls > 0 ? ` · ${cost.unpricedCalls} calls of models without a price` : '';
    lines.push(
      `cost     ${formatUsd(cost.totalUsd)}${byModel.length > 1 ? ` (${byModel.join(', ')})` : ''}${unpriced}`,
    );
  }
  if (report.degradations.total > 0) {
    const byTool = Object.entries(report.degradations.byTool).map(([tool, count]) => `${tool} ×${count}`);
    lines.push(`degraded ${report.degradations.total} tool results (${byTool.join(', ')})`);
  }
  const uncertain = report.uncertainCalls;
  if (uncertain !== undefined && uncertain.total > 0) {
    const byTool = Object.entries(uncertain.byTool).map(([tool, count]) => `${tool} ×${count}`);
    lines.push(
      `unknown  ${uncertain.total} tool calls with an unknown outcome (${byTool.join(', ')}) · repeats reconciled ${uncertain.reconciled}, not run ${uncertain.blocked}`,
    );
  }
  const children = report.children;
  if (children !== undefined && children.total > 0) {
    const runs = children.runs.map((child) => `${child.agentName} (${child.kind}) ${child.status}`);
    lines.push(
      `children ${children.total} child runs, their requests and retries counted above: ${runs.join(', ')}${children.answeredBy === undefined ? '' : ` · answered by ${children.answeredBy}`}`,
    );
  }
  const errors = Object.entries(report.errors.byCode);
  if (errors.length > 0)
    lines.push(`errors   ${errors.map(([code, count]) => `${code} ×${count}`).join(', ')}`);
  return lines;
}

/** Exit codes of `keel run` and `keel resume`: 0 completed, 1 failed, 3 interrupted (resumable), 130 cancelled. */
export function exitCodeOf(result: RunResult<unknown>): number {
  return { completed: 0, failed: 1, interrupted: 3, cancelled: 130 }[result.status];
}

/** The run options that show events live, unless the output is JSON (printed once, at the end). */
export function liveEvents(json: boolean, output: Output): { onEvent?: RunEventListener } {
  return json ? {} : { onEvent: (event) => renderEvent(event, output) };
}

/** Prints a run's result (as JSON or as text) and returns the command's exit code. */
export function presentResult(result: RunResult<unknown>, json: boolean, output: Output): number {
  if (json) output.out(JSON.stringify(resultJson(result), null, 2));
  else renderResult(result, output);
  return exitCodeOf(result);
}

/** US dollars for people: `$0.0123`, small amounts to the millionth (`$0.000042`). */
export function formatUsd(usd: number): string {
  if (usd === 0) return '$0';
  return `$${usd >= 0.01 ? usd.toFixed(4) : usd.toFixed(6)}`;
}
