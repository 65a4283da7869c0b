import { describe, expect, it } from 'vitest';
import { KeelError } from './keel-error.js';
import { isSecretKey, REDACTED, redactSecrets } from './redact.js';

const OPENAI_KEY = 'sk-abcdefghijklmnopqrstuvwxyz0123456789ABCD';
const OPENAI_PROJECT_KEY = 'sk-proj-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0UvWxYz_-abc';
const ANTHROPIC_KEY = 'sk-ant-api03-Zyx9Wvu8Tsr7Qpo6Nml5Kji4Hgf3Edc2Ba1-_0ZZZZAA';
const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';

describe('redactSecrets', () => {
  const cases: readonly [label: string, input: string, expected: string][] = [
    [
      'an OpenAI key',
      `Incorrect API key provided: ${OPENAI_KEY}.`,
      `Incorrect API key provided: ${REDACTED}.`,
    ],
    ['an OpenAI project key', `key ${OPENAI_PROJECT_KEY} revoked`, `key ${REDACTED} revoked`],
    ['an Anthropic key', `using ${ANTHROPIC_KEY}`, `using ${REDACTED}`],
    ['a Bearer token', `sent Bearer ${JWT} upstream`, `sent Bearer ${REDACTED} upstream`],
    ['a lowercase bearer token', 'bearer abc123def456', `bearer ${REDACTED}`],
    [
      'an Authorization header with a scheme',
      'Authorization: Bearer abc',
      `Authorization: Bearer ${REDACTED}`,
    ],
    [
      'an Authorization header with Basic',
      'authorization: Basic dXNlcjpwYXNz',
      `authorization: Basic ${REDACTED}`,
    ],
    ['a bare Basic credential', 'header was Basic dXNlcjpwYXNzd29yZA==', `header was Basic ${REDACTED}`],
    ['an x-api-key header', `x-api-key: ${ANTHROPIC_KEY}`, `x-api-key: ${REDACTED}`],
    ['an x-api-key header with a short value', 'X-Api-Key: abc', `X-Api-Key: ${REDACTED}`],
    ['an api-key header (Azure)', 'api-key: 0123456789abcdef', `api-key: ${REDACTED}`],
    [
      'a Google key parameter',
      'GET /v1/models?key=AIzaSyA1234567890abcdefghijklmnopqrstu',
      `GET /v1/models?key=${REDACTED}`,
    ],
    [
      'an api_key query parameter',
      'GET /search?api_key=abc123&q=paris',
      `GET /search?api_key=${REDACTED}&q=paris`,
    ],
    [
      'a JSON password field',
      '{"user":"ann","password":"hunter2"}',
      `{"user":"ann","password":"${REDACTED}"}`,
    ],
    [
      'a JSON authorization header',
      '{"authorization":"Bearer abc"}',
      `{"authorization":"Bearer ${REDACTED}"}`,
    ],
    ['a client_secret', 'client_secret=s3cr3t', `client_secret=${REDACTED}`],
    [
      'a PostgreSQL URL password',
      'connect to postgres://user:pass@db.local:5432/keel failed',
      `connect to postgres://user:${REDACTED}@db.local:5432/keel failed`,
    ],
    ['a Redis URL password without a user', 'redis://:p4ss@cache:6379', `redis://:${REDACTED}@cache:6379`],
    ['a JWT on its own', `token ${JWT}`, `token ${REDACTED}`],
    ['an AWS access key id', 'AKIAIOSFODNN7EXAMPLE was denied', `${REDACTED} was denied`],
    ['a GitHub token', 'ghp_abcdefghijklmnopqrstuvwxyz0123456789', REDACTED],
    ['two secrets in one message', `${OPENAI_KEY} and ${ANTHROPIC_KEY}`, `${REDACTED} and ${REDACTED}`],
    [
      'a token query parameter',
      'GET https://api.example.com/v1?token=abc123def456ghi&q=1',
      `GET https://api.example.com/v1?token=${REDACTED}&q=1`,
    ],
    ['a token parameter in prose', 'retrying with token=s3cr3tvalue', `retrying with token=${REDACTED}`],
    [
      'an access_token parameter',
      '/callback#access_token=ya29.a0AfH6SM&expires_in=3599',
      `/callback#access_token=${REDACTED}&expires_in=3599`,
    ],
    ['a JSON token field', '{"token":"tok_live_123","user":"ann"}', `{"token":"${REDACTED}","user":"ann"}`],
    [
      'a Cookie header, every cookie in it',
      'Cookie: session=abc123def456; theme=dark',
      `Cookie: ${REDACTED}`,
    ],
    [
      'a Set-Cookie header',
      'upstream sent Set-Cookie: sid=s%3Aabc.def; Path=/; HttpOnly\nnext line',
      `upstream sent Set-Cookie: ${REDACTED}\nnext line`,
    ],
    ['a JSON cookie field', '{"cookie":"a=1; b=2","status":401}', `{"cookie":"${REDACTED}","status":401}`],
  ];
  it.each(cases)('removes %s', (_label, input, expected) => {
    expect(redactSecrets(input)).toBe(expected);
  });

  const untouched: readonly string[] = [
    'HTTP 429: Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 29000.',
    "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
    'prompt is too long: 210000 tokens > 200000 maximum',
    'fetch failed: connect ECONNREFUSED 127.0.0.1:8080',
    'Basic information about the task-manager: risk-assessment-procedure-v2 is running',
    'Bearer tokens are rejected by this endpoint.',
    'see https://platform.openai.com/docs/guides/error-codes/api-errors for details',
    'postgres://db.local:5432/keel',
    'max_tokens: 4096, temperature: 0.2, stop: null',
    'max_tokens=4096&temperature=0.2',
    '{"max_tokens": 4096, "prompt_tokens": 12}',
    'usage: { tokens: 5, total_tokens: 17 }',
    'Unexpected token: } in JSON at position 3',
    'the cookie policy allows it',
    'Unexpected token } in JSON at position 12',
    'the task-1234567890abcdefghij failed',
    '',
  ];
  it.each(untouched)('leaves ordinary text alone: %s', (text) => {
    expect(redactSecrets(text)).toBe(text);
  });

  it('is applied to KeelError messages and guidance', () => {
    const error = new KeelError('provider.auth', `bad key ${OPENAI_KEY}`, {
      guidance: `replace ${OPENAI_KEY}`,
    });
    expect(error.message).toBe(`bad key ${REDACTED}`);
    expect(error.guidance).toBe(`replace ${REDACTED}`);
  });

  it('handles long hostile input without backtracking blow-up', () => {
    // Sized so a quadratic pattern would run for minutes (the test timeout fails it) while linear ones take
    // milliseconds; no clock is read here. A scheme-like prefix once made the URL pattern quadratic.
    const hostile = `${'a-'.repeat(200_000)}password`;
    expect(redactSecrets(hostile)).toBe(hostile);
    expect(redactSecrets('Bearer '.repeat(50_000))).toBe('Bearer '.repeat(50_000));
    expect(redactSecrets(`${'x:'.repeat(100_000)}//`).length).toBe(200_002);
  });
});

describe('isSecretKey', () => {
  it.each([
    'authorization',
    'Authorization',
    'proxy-authorization',
    'x-api-key',
    'api_key',
    'apiKey',
    'openaiApiKey',
    'password',
    'dbPassword',
    'client_secret',
    'access_token',
    'refreshToken',
    'cookie',
    'set-cookie',
    'private_key',
  ])('%s holds a secret', (key) => {
    expect(isSecretKey(key)).toBe(true);
  });

  it.each([
    'max_tokens',
    'prompt_tokens',
    'model',
    'status',
    'content-type',
    'x-request-id',
    'code',
    'keyword',
  ])('%s does not', (key) => {
    expect(isSecretKey(key)).toBe(false);
  });
});

describe('redactSecrets on ordinary English', () => {
  // Prose that names credentials, keys and tokens without holding one: every sentence must come back as it was.
  const corpus: readonly string[] = [
    'Refusing to bind 0.0.0.0 without a token: anyone who can reach it could read runs and approve tool calls',
    'Refusing to bind :: without a token: Anyone on the network could approve tool calls.',
    'The secret: nobody reads the manual.',
    'Password: required, and it must be at least twelve characters long.',
    'Authorization: denied for this user',
    'a token: someone else holds it',
    'The keyboard has a broken key, and the monkey pressed every one of them.',
    'Tokens are counted per request; the tokenizer splits words into tokens.',
    'A turkey, a donkey and a monkey walked into a keynote about keys.',
    'Secrets management is hard; secretaries keep the passwords of their bosses in a book.',
    'The author tokenised the input, then the bookkeeper checked the keys.',
    'Cookie: chocolate chip is the best kind',
    'pk-based lookups-are-very-fast-indeed on indexed tables',
    'Bearer bonds were abolished; basic income is debated.',
    'whoever holds the token: everyone agrees it should be rotated',
  ];
  it.each(corpus)('leaves it as it is: %s', (sentence) => {
    expect(redactSecrets(sentence)).toBe(sentence);
  });

  it('keeps the dashboard refusal whole in a KeelError message', () => {
    const message =
      'Refusing to bind 0.0.0.0 without a token: anyone who can reach it could read runs and approve tool calls';
    expect(new KeelError('config.invalid', message).message).toBe(message);
  });

  it('still removes real credentials written the same way', () => {
    expect(redactSecrets('token: abc123def456')).toBe(`token: ${REDACTED}`);
    expect(redactSecrets('password: hunter2')).toBe(`password: ${REDACTED}`);
    expect(redactSecrets('secret: Zx9-QwErTy')).toBe(`secret: ${REDACTED}`);
    expect(redactSecrets('token:anyone')).toBe(`token:${REDACTED}`);
    expect(redactSecrets('token=anyone')).toBe(`token=${REDACTED}`);
    expect(redactSecrets('{"token": "anyone"}')).toBe(`{"token": "${REDACTED}"}`);
    expect(redactSecrets('Authorization: Bearer anyone')).toBe(`Authorization: Bearer ${REDACTED}`);
    expect(redactSecrets('x-api-key: anyone')).toBe(`x-api-key: ${REDACTED}`);
    expect(redactSecrets('Cookie: session=abc123')).toBe(`Cookie: ${REDACTED}`);
    expect(redactSecrets(`key ${OPENAI_KEY}`)).toBe(`key ${REDACTED}`);
    expect(redactSecrets('sk-abcdefghij0klmnopqrst')).toBe(REDACTED);
  });
});
