import { KeelError } from '../../errors/keel-error.js';
import { MAX_DELAY_MS } from '../../policies/delays.js';

/** Checks a duration option. */
export function checkMilliseconds(value: unknown, name: string, zeroAllowed = false): void {
  if (typeof value !== 'number' || !(zeroAllowed ? value >= 0 : value > 0) || value > MAX_DELAY_MS) {
    agentConfigError(
      `${name} must be milliseconds ${zeroAllowed ? 'from 0' : 'above 0'} and at most ${MAX_DELAY_MS}; got ${String(value)}`,
    );
  }
}

/** A `config.invalid` error for a bad agent option. */
export function agentConfigError(message: string): never {
  throw new KeelError('config.invalid', `agent: ${message}`, { data: { where: 'agent' } });
}
