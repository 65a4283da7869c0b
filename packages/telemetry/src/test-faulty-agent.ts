// Test helper (not built, not exported), shared by the telemetry packages' tests: an agent whose one run meets every
// kind of fault keel reports.
import { agent, type Clock, consecutive, KeelError, type RunStore, type Tool, tool } from '@keel/core';
import { scriptedModel } from '@keel/core/testing';

/** Options of {@link faultyAgent}. */
export interface FaultyAgentOptions {
  /** Defaults to the system clock. */
  clock?: Clock;
  /** The agent's name. Defaults to `travel`. */
  name?: string;
  /** Awaited inside the weather tool's successful call, while the run goes on. Defaults to none. */
  duringRun?: () => Promise<void>;
  /** The wait before each retry, in milliseconds. Defaults to 250. */
  retryDelayMs?: number;
  /** Text the failing card tool puts in its error message (to check what reaches telemetry). Defaults to none. */
  chargeErrorDetail?: string;
  /** Makes the run durable on this store. Defaults to none. */
  store?: RunStore;
  /** Called inside the card tool's call, before it fails. Defaults to none. */
  onCharge?: () => void;
}

/**
 * The run: the primary model (`openai/gpt-primary`) fails twice with `provider.server_error` (one retry, then its
 * breaker opens at two consecutive failures), the run falls back to `anthropic/claude-backup`, which calls an
 * unknown tool `get_wether` (a correction), `get_weather` (fails once with `tool.unavailable`, retried, then
 * answers) and `charge_card` (fails with `tool.failed`, sent to the model as data), then answers. Usage: 120 + 300
 * input tokens, 30 + 12 output tokens.
 */
export function faultyAgent(options: FaultyAgentOptions = {}) {
  const primary = scriptedModel(
    [
      new KeelError('provider.server_error', 'upstream answered 503'),
      new KeelError('provider.server_error', 'upstream answered 503'),
    ],
    { provider: 'openai', model: 'gpt-primary' },
  );
  const backup = scriptedModel(
    [
      {
        toolCalls: [
          { id: 'call_unknown', name: 'get_wether', arguments: { city: 'Paris' } },
          { id: 'call_weather', name: 'get_weather', arguments: { city: 'Paris' } },
          { id: 'call_charge', name: 'charge_card', arguments: { amountCents: 500 } },
        ],
        usage: { inputTokens: 120, outputTokens: 30 },
      },
      { content: 'Sunny in Paris; the card was declined.', usage: { inputTokens: 300, outputTokens: 12 } },
    ],
    { provider: 'anthropic', model: 'claude-backup' },
  );
  let weatherCalls = 0;
  const weather = tool({
    name: 'get_weather',
    description: 'Current weather for a city',
    input: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    idempotent: true,
    execute: async ({ city }: { city: string }) => {
      weatherCalls++;
      if (weatherCalls === 1) throw new KeelError('tool.unavailable', 'weather service restarting');
      await options.duringRun?.();
      return `Sunny in ${city}`;
    },
  });
  const charge = tool({
    name: 'charge_card',
    description: 'Charges the card on file',
    input: { type: 'object', properties: { amountCents: { type: 'number' } }, required: ['amountCents'] },
    execute: () => {
      options.onCharge?.();
      throw new Error(
        `card declined${options.chargeErrorDetail === undefined ? '' : `: ${options.chargeErrorDetail}`}`,
      );
    },
  });
  const delayMs = options.retryDelayMs ?? 250;
  const tools: Tool[] = [weather, charge];
  return agent({
    name: options.name ?? 'travel',
    model: primary,
    fallbacks: [backup],
    tools,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.store === undefined ? {} : { store: options.store }),
    retry: { maxAttempts: 2, delay: { next: () => delayMs } },
    // Open long enough to be seen open by a scrape after the run (the agent's default opens for 5 s).
    breaker: { strategy: consecutive({ threshold: 2 }), halfOpenAfterMs: 600_000 },
  });
}
