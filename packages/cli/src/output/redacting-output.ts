import { API_KEY_VARIABLE } from '@keel/agent-file';
import { REDACTED } from '@keel/core/adapter';
import type { Output } from './output.js';

/** Shorter values are left alone: replacing them would mangle ordinary words. */
const MIN_SECRET_LENGTH = 6;

/** The values of the API key variables in `environment` (names matching `*_API_KEY`, `*_API_TOKEN`). */
export function apiKeyValues(environment: NodeJS.ProcessEnv): string[] {
  return Object.entries(environment)
    .filter(
      ([name, value]) =>
        API_KEY_VARIABLE.test(name) && value !== undefined && value.length >= MIN_SECRET_LENGTH,
    )
    .map(([, value]) => value!);
}

/**
 * A function that replaces each secret, as it is and as JSON escapes it, with `[redacted]` in a text: what the CLI's
 * output and the dashboard's API responses go through. Returns the text as it is when there is no secret.
 */
export function secretReplacer(secrets: readonly string[]): (text: string) => string {
  const forms = [...new Set(secrets.flatMap((secret) => [secret, JSON.stringify(secret).slice(1, -1)]))].sort(
    (left, right) => right.length - left.length,
  );
  return (text) => forms.reduce((result, form) => result.split(form).join(REDACTED), text);
}

/**
 * An Output that replaces each secret, as it is and as JSON escapes it, with `[redacted]` in every line: whatever a
 * provider's error, a stored run or a server's echo carries, the CLI never prints an API key it could send.
 */
export function redactingOutput(output: Output, secrets: readonly string[]): Output {
  if (secrets.length === 0) return output;
  const redact = secretReplacer(secrets);
  return {
    colour: output.colour,
    out: (line) => output.out(redact(line)),
    error: (line) => output.error(redact(line)),
  };
}
