import type { JsonValue } from '../../errors/keel-error.js';
import { KeelError } from '../../errors/keel-error.js';
import type { GuardrailResult, TextGuardrail } from './guardrail.js';

/** The kinds of personal or secret data the built-in detector finds. */
export type PiiKind = 'email' | 'phone' | 'card_number' | 'api_key';

/** One finding: where it is and what kind. `text` is the matched text itself; never log it. */
export interface PiiMatch {
  kind: PiiKind;
  start: number;
  end: number;
  text: string;
}

/** Every kind, in the order overlapping matches are resolved (an API key wins over a phone number inside it). */
export const PII_KINDS: readonly PiiKind[] = ['api_key', 'card_number', 'email', 'phone'];

const API_KEY_PATTERNS: readonly RegExp[] = [
  // OpenAI (sk-..., sk-proj-...) and Anthropic (sk-ant-api03-...).
  /(?<![\w-])sk-(?:proj-|ant-(?:[a-z]+\d{2}-)?)?[A-Za-z0-9_-]{20,}/g,
  // AWS access key ids.
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  // GitHub tokens: classic (ghp_, gho_, ghu_, ghs_, ghr_) and fine-grained.
  /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b/g,
  // Slack tokens.
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g,
  // Google API keys.
  /\bAIza[0-9A-Za-z_-]{35}(?![\w-])/g,
  // Stripe secret, restricted and publishable keys.
  /\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b/g,
];

// Quantifiers are bounded and the local part may only start at a word boundary, so scanning stays linear.
const EMAIL =
  /(?<![\w.%+-])[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){1,8}[A-Za-z]{2,24}(?![\w-])/g;

// US numbers need the 3-3-4 grouping with separators (or parentheses): dates (2024-01-15), SSN-like ids (123-45-6789)
// and bare digit runs do not have it.
const US_PHONE = /(?<![\w+.-])(?:\+?1[-.\s]?)?(?:\(\d{3}\)\s?|\d{3}[-.\s])\d{3}[-.\s]\d{4}(?![\w-]|\.\d)/g;

// International numbers must start with "+" and a country code; the digit count is checked after matching (E.164:
// 8 to 15 digits) so the expression itself needs no ambiguous grouping.
const INTERNATIONAL_PHONE = /(?<![\w+])\+[1-9][\d ().-]{6,24}/g;

// 13 to 19 digits, optionally grouped by single spaces or dashes, not part of a longer grouped number; every
// candidate must pass the Luhn check.
const CARD_NUMBER = /(?<![\w-]|\d[ -])\d(?:[ -]?\d){12,18}(?![\w-]|[ -]\d)/g;

/**
 * Finds emails, phone numbers (international with a leading `+`, and US formats such as `(555) 123-4567` or
 * `555-123-4567`), card numbers (13 to 19 digits, spaces or dashes allowed, Luhn-valid) and API-key shapes (`sk-...`,
 * `AKIA...`, `ghp_...`, `xox...-`, `AIza...`, `sk_live_...`). Matches are sorted by position and never overlap.
 *
 * @example
 *   detectPii('Mail ada@example.com').map((match) => match.kind); // ['email']
 */
export function detectPii(text: string, kinds: readonly PiiKind[] = PII_KINDS): PiiMatch[] {
  const found: PiiMatch[] = [];
  for (const kind of PII_KINDS) {
    if (!kinds.includes(kind)) continue;
    for (const match of scan(kind, text)) {
      if (!found.some((other) => match.start < other.end && other.start < match.end)) found.push(match);
    }
  }
  return found.sort((left, right) => left.start - right.start);
}

function scan(kind: PiiKind, text: string): PiiMatch[] {
  switch (kind) {
    case 'api_key':
      return API_KEY_PATTERNS.flatMap((pattern) => matches(kind, pattern, text));
    case 'email':
      return matches(kind, EMAIL, text);
    case 'card_number':
      return matches(kind, CARD_NUMBER, text).filter((match) => luhnValid(match.text.replace(/[ -]/g, '')));
    case 'phone':
      return [
        ...matches(kind, US_PHONE, text),
        ...matches(kind, INTERNATIONAL_PHONE, text).flatMap((match) => internationalPhone(match, text)),
      ];
  }
}

function matches(kind: PiiKind, pattern: RegExp, text: string): PiiMatch[] {
  return [...text.matchAll(pattern)].map((match) => ({
    kind,
    start: match.index,
    end: match.index + match[0].length,
    text: match[0],
  }));
}

/** Trims a `+...` candidate to its last digit and accepts it when it looks like a phone number. */
function internationalPhone(match: PiiMatch, text: string): PiiMatch[] {
  // The candidate stopped at its length cap inside a longer run of digits: not a phone number.
  if (/^[\d ().-]?\d/.test(text.slice(match.end, match.end + 2))) return [];
  const trimmed = match.text.replace(/[^\d)]+$/, '').replace(/\($/, '');
  const digits = trimmed.replace(/\D/g, '');
  // Doubled separators ("1  2", "1--2") or a run of digits longer than the candidate allows are not phone numbers.
  if (digits.length < 8 || digits.length > 15 || /[\s.-]{2,}/.test(trimmed) || /\d{13,}/.test(trimmed))
    return [];
  return [{ ...match, end: match.start + trimmed.length, text: trimmed }];
}

/** The Luhn checksum, as card numbers carry it. `digits` must hold only digits. */
export function luhnValid(digits: string): boolean {
  if (!/^\d+$/.test(digits)) return false;
  let sum = 0;
  for (let index = 0; index < digits.length; index++) {
    let digit = digits.charCodeAt(digits.length - 1 - index) - 48;
    if (index % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** Replaces each match with a placeholder naming its kind: `[email]`, `[phone]`, `[card_number]`, `[api_key]`. */
export function redactPii(text: string, matches: readonly PiiMatch[]): string {
  let result = '';
  let position = 0;
  for (const match of [...matches].sort((left, right) => left.start - right.start)) {
    if (match.start < position) continue;
    result += `${text.slice(position, match.start)}[${match.kind}]`;
    position = match.end;
  }
  return result + text.slice(position);
}

/** Options of {@link piiGuardrail}. */
export interface PiiGuardrailOptions {
  /** Defaults to `pii`. */
  name?: string;
  /** Which text to check. Defaults to `input`. */
  stage?: 'input' | 'output';
  /** `block` ends the run; `redact` replaces each finding with a placeholder and goes on. Defaults to `block`. */
  action?: 'block' | 'redact';
  /** Which kinds to look for. Defaults to all of them. */
  kinds?: readonly PiiKind[];
}

/**
 * A guardrail that blocks or redacts personal data and secrets, found by {@link detectPii}. Its findings record each
 * match's kind and position, never the matched text.
 *
 * @example
 *   const agentGuardrails = [piiGuardrail({ stage: 'output', action: 'redact' })];
 */
export function piiGuardrail(options: PiiGuardrailOptions = {}): TextGuardrail {
  const { name = 'pii', stage = 'input', action = 'block', kinds = PII_KINDS } = options;
  if (stage !== 'input' && stage !== 'output')
    throw new KeelError('config.invalid', 'piiGuardrail stage must be input or output');
  if (action !== 'block' && action !== 'redact')
    throw new KeelError('config.invalid', 'piiGuardrail action must be block or redact');
  const unknown = kinds.filter((kind) => !PII_KINDS.includes(kind));
  if (unknown.length > 0 || kinds.length === 0) {
    throw new KeelError(
      'config.invalid',
      `piiGuardrail kinds must be a non-empty list of ${PII_KINDS.join(', ')}`,
    );
  }
  return Object.freeze({
    name,
    stage,
    check(text: string): GuardrailResult {
      const found = detectPii(text, kinds);
      if (found.length === 0) return { action: 'allow' };
      const counts: Record<string, JsonValue> = {};
      for (const match of found) counts[match.kind] = ((counts[match.kind] as number | undefined) ?? 0) + 1;
      const data: Record<string, JsonValue> = {
        counts,
        entities: found.map((match) => ({ kind: match.kind, start: match.start, end: match.end })),
      };
      if (action === 'redact')
        return { action: 'redact', trigger: 'pii_detected', text: redactPii(text, found), data };
      const summary = Object.entries(counts)
        .map(([kind, count]) => `${count} ${kind}`)
        .join(', ');
      return {
        action: 'block',
        trigger: 'pii_detected',
        message: `personal data or secrets found (${summary})`,
        data,
      };
    },
  });
}
