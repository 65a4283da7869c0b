import { REDACTED } from '@keel/core/adapter';

/**
 * Replaces secrets (API keys, as they are and as JSON escapes them) with `[redacted]` in text that arrives in pieces,
 * such as an answer streamed delta by delta: a secret split across two pieces is still caught, because the end of a
 * piece that could be the start of a secret is held back until the next piece (or `flush`) tells.
 */
export class StreamRedactor {
  private readonly forms: string[];
  private pending = '';

  constructor(secrets: readonly string[]) {
    this.forms = [...new Set(secrets.flatMap((secret) => [secret, JSON.stringify(secret).slice(1, -1)]))]
      .filter((form) => form !== '')
      .sort((left, right) => right.length - left.length);
  }

  /** The text that can be shown now, secrets replaced; a tail that may begin a secret waits for the next piece. */
  push(text: string): string {
    if (this.forms.length === 0) return text;
    const buffer = this.redact(this.pending + text);
    const held = this.heldLength(buffer);
    this.pending = buffer.slice(buffer.length - held);
    return buffer.slice(0, buffer.length - held);
  }

  /** What was held back: the text has ended, so it is no secret. */
  flush(): string {
    const rest = this.pending;
    this.pending = '';
    return rest;
  }

  /** `text` with every whole secret replaced (for text that arrives whole, such as a line). */
  redact(text: string): string {
    return this.forms.reduce((redacted, form) => redacted.split(form).join(REDACTED), text);
  }

  /** The length of the longest end of `buffer` that is the beginning of a secret. */
  private heldLength(buffer: string): number {
    let longest = 0;
    for (const form of this.forms) {
      for (let length = Math.min(form.length - 1, buffer.length); length > longest; length--) {
        if (buffer.endsWith(form.slice(0, length))) {
          longest = length;
          break;
        }
      }
    }
    return longest;
  }
}
