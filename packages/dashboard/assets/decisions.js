// Pending decisions: a card per call the run waits for, with the answers it takes. Answering resumes the run.
import { postJson } from './api.js';
import { h, jsonBlock, replace } from './dom.js';
import { problem } from './run-panels.js';

/** The calls the run waits for, or nothing. */
export function decisions(view, run) {
  if (run.pendingDecisions.length === 0) return null;
  const disabledReason = run.resume.available ? undefined : run.resume.unavailableReason;
  const count = run.pendingDecisions.length;
  return [
    h('h2', {}, count === 1 ? 'Waiting for a decision' : `Waiting for ${count} decisions`),
    h(
      'p',
      { className: 'waiting-state', role: 'status' },
      'The run is waiting, not failed: answer each call below and it resumes from its last checkpoint.',
    ),
    disabledReason ? h('p', { className: 'note' }, disabledReason) : null,
    run.pendingDecisions.map((decision) =>
      decisionCard(view, decision, disabledReason !== undefined || run.resume.active),
    ),
  ];
}

function decisionCard(view, decision, disabled) {
  const approval = decision.kind === 'approval';
  const message = h('p', { className: 'decision-message', role: 'status' });
  const reason = h('input', {
    type: 'text',
    name: 'reason',
    maxlength: 2000,
    placeholder: 'reason (shown to the model)',
    'aria-label': 'reason',
  });
  const buttons = [];
  const send = async (answer) => {
    for (const button of buttons) button.disabled = true;
    reason.disabled = true;
    message.textContent = 'Sending…';
    const item = { idempotencyKey: decision.idempotencyKey, answer };
    if (answer === 'reject' && reason.value.trim()) item.reason = reason.value.trim();
    try {
      await postJson(`/api/runs/${encodeURIComponent(view.runId)}/decisions`, { answers: [item] });
      message.textContent = 'Resuming…';
      view.load();
    } catch (error) {
      for (const button of buttons) button.disabled = false;
      reason.disabled = false;
      replace(message, problem(error));
    }
  };
  const button = (label, answer, className) => {
    const element = h(
      'button',
      { type: 'button', className, disabled, on: { click: () => send(answer) } },
      label,
    );
    buttons.push(element);
    return element;
  };
  return h(
    'article',
    { className: `decision decision-${decision.kind}`, 'data-key': decision.idempotencyKey },
    h(
      'h3',
      {},
      h('code', {}, decision.toolName),
      approval ? ' needs approval' : ' may or may not have run before the process stopped',
    ),
    h(
      'p',
      { className: 'facts' },
      `step ${decision.step} · call ${decision.callIndex} · key ${decision.idempotencyKey}`,
    ),
    h('p', {}, 'Arguments as the model sent them:'),
    jsonBlock(decision.arguments, 'json arguments'),
    approval
      ? h(
          'div',
          { className: 'actions' },
          button('Approve', 'approve', 'approve'),
          reason,
          button('Reject', 'reject', 'reject'),
        )
      : h(
          'div',
          { className: 'actions' },
          h(
            'p',
            { className: 'note' },
            'Executing again may repeat its effect; abandoning tells the model its outcome is unknown.',
          ),
          button('Execute again', 'execute', 'execute'),
          button('Abandon', 'abandon', 'abandon'),
        ),
    message,
  );
}
