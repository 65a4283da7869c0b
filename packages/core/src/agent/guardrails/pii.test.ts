import { describe, expect, it } from 'vitest';
import { detectPii, luhnValid, piiGuardrail, redactPii } from './pii.js';

const context = { runId: 'run-1', step: 0, signal: new AbortController().signal };

describe('detectPii finds', () => {
  it.each([
    ['email', 'Write to ada.lovelace+notes@example.co.uk today', 'ada.lovelace+notes@example.co.uk'],
    ['email', 'contact: bob@mail.example.com.', 'bob@mail.example.com'],
    ['phone', 'Call +44 20 7946 0958 after 5', '+44 20 7946 0958'],
    ['phone', 'Call +33 1 23 45 67 89.', '+33 1 23 45 67 89'],
    ['phone', 'Call +14155552671 now', '+14155552671'],
    ['phone', 'Call +49 (30) 901820 now', '+49 (30) 901820'],
    ['phone', 'US office: (555) 123-4567', '(555) 123-4567'],
    ['phone', 'US office: 555-123-4567', '555-123-4567'],
    ['phone', 'US office: 555.123.4567', '555.123.4567'],
    ['phone', 'US office: +1 555 123 4567', '+1 555 123 4567'],
    ['phone', 'US office: 1-800-555-0199', '1-800-555-0199'],
    ['card_number', 'card 4111 1111 1111 1111 exp 12/29', '4111 1111 1111 1111'],
    ['card_number', 'card 4111-1111-1111-1111', '4111-1111-1111-1111'],
    ['card_number', 'card 5500005555555559', '5500005555555559'],
    ['card_number', 'amex 378282246310005', '378282246310005'],
    ['api_key', 'key sk-proj-abcdefghijklmnopqrstuvwxyz123456', 'sk-proj-abcdefghijklmnopqrstuvwxyz123456'],
    ['api_key', 'key sk-ant-api03-abcdefghijklmnopqrstuvwxyz', 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz'],
    ['api_key', 'aws AKIAIOSFODNN7EXAMPLE here', 'AKIAIOSFODNN7EXAMPLE'],
    ['api_key', `gh ghp_${'a1B2'.repeat(9)} here`, `ghp_${'a1B2'.repeat(9)}`],
    ['api_key', 'slack xoxb-123456789012-abcdefghij', 'xoxb-123456789012-abcdefghij'],
    ['api_key', `google AIza${'x'.repeat(35)}`, `AIza${'x'.repeat(35)}`],
    ['api_key', 'stripe sk_live_abcdefghijklmnop1234', 'sk_live_abcdefghijklmnop1234'],
  ])('%s in %j', (kind, text, expected) => {
    const found = detectPii(text);
    expect(found.map((match) => [match.kind, match.text])).toEqual([[kind, expected]]);
    const [match] = found;
    expect(text.slice(match!.start, match!.end)).toBe(expected);
  });
});

describe('detectPii does not flag', () => {
  it.each([
    ['a date', 'Due 2024-01-15, meeting 15/01/2024 at 10:30'],
    ['an ISO timestamp', 'at 2024-01-15T10:30:00Z'],
    ['an SSN-shaped id', 'ticket 123-45-6789'],
    ['a bare 10-digit id', 'order 5551234567'],
    ['a longer dashed id', 'part 555-123-4567-89'],
    ['an IP address', 'host 192.168.100.200'],
    ['a version', 'version 1.2.3 and 10.0.19045'],
    ['a 16-digit number failing Luhn', 'ref 4111 1111 1111 1112'],
    ['a short number with a plus', 'score +12 34'],
    ['a math expression', '3 + 4 = 7'],
    ['an at-handle', 'ping @ada on chat'],
    ['a short sk- word', 'the sk-ill tree'],
    ['plain prose', 'The weather in Paris is 21°C with 40% humidity.'],
  ])('%s', (_label, text) => {
    expect(detectPii(text)).toEqual([]);
  });
});

describe('luhnValid', () => {
  it.each([
    ['4111111111111111', true],
    ['4111111111111112', false],
    ['79927398713', true],
    ['0', true],
    ['12a4', false],
    ['', false],
  ])('%s -> %s', (digits, valid) => {
    expect(luhnValid(digits)).toBe(valid);
  });
});

describe('redactPii', () => {
  it('replaces each finding with its kind, restricted to the kinds asked for', () => {
    const text = 'Mail ada@example.com or call 555-123-4567, card 4111 1111 1111 1111';
    expect(redactPii(text, detectPii(text))).toBe('Mail [email] or call [phone], card [card_number]');
    expect(redactPii(text, detectPii(text, ['email']))).toBe(
      'Mail [email] or call 555-123-4567, card 4111 1111 1111 1111',
    );
  });

  it('resolves overlaps: an API key is not also reported as a phone or card', () => {
    const found = detectPii('token sk-1234567890123456789012345');
    expect(found.map((match) => match.kind)).toEqual(['api_key']);
  });
});

describe('piiGuardrail', () => {
  const text = 'I am ada@example.com, card 4111 1111 1111 1111';

  it('blocks by default, reporting kinds and positions but never the values', async () => {
    const result = await piiGuardrail().check(text, context);
    expect(result).toEqual({
      action: 'block',
      trigger: 'pii_detected',
      message: 'personal data or secrets found (1 email, 1 card_number)',
      data: {
        counts: { email: 1, card_number: 1 },
        entities: [
          { kind: 'email', start: 5, end: 20 },
          { kind: 'card_number', start: 27, end: 46 },
        ],
      },
    });
    expect(JSON.stringify(result)).not.toContain('ada@example.com');
  });

  it('redacts when asked', async () => {
    const guard = piiGuardrail({ stage: 'output', action: 'redact', kinds: ['email'] });
    expect(guard).toMatchObject({ name: 'pii', stage: 'output' });
    expect(await guard.check(text, context)).toMatchObject({
      action: 'redact',
      text: 'I am [email], card 4111 1111 1111 1111',
    });
  });

  it('allows clean text', async () => {
    expect(await piiGuardrail().check('What is the weather in Paris?', context)).toEqual({ action: 'allow' });
  });

  it.each([{ stage: 'tool-call' }, { action: 'warn' }, { kinds: [] }, { kinds: ['ssn'] }])(
    'rejects options %j',
    (options) => {
      expect(() => piiGuardrail(options as never)).toThrowError(
        expect.objectContaining({ code: 'config.invalid' }),
      );
    },
  );

  it.each([
    ['a 50,000-character local part', `${'a'.repeat(50_000)}@${'b.'.repeat(20_000)}`],
    ['a long run of spaced digits', '4 '.repeat(50_000)],
    ['a long run of dashed digits', `+${'1-'.repeat(50_000)}`],
    ['repeated at signs', 'a@'.repeat(50_000)],
  ])('finds nothing in hostile input: %s', (_label, text) => {
    // Every expression is linear, so this ends in milliseconds; catastrophic backtracking would hit the test timeout.
    expect(detectPii(text)).toEqual([]);
  });

  it('does not take a card number out of a longer grouped number', () => {
    expect(detectPii('account 4111 1111 1111 1111 2222 3333')).toEqual([]);
  });
});
