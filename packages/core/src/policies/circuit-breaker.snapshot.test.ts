// Restoring a breaker from toJSON() in another process or after a restart: what it may admit, and what its refusals
// carry.
import { describe, expect, it } from 'vitest';
import { KeelError } from '../errors/keel-error.js';
import { FakeClock } from '../testing/fake-clock.js';
import { consecutive } from './breaker/consecutive.js';
import type { BreakerSnapshot } from './breaker/snapshot.js';
import { type CircuitBreakerOptions, circuitBreaker } from './circuit-breaker.js';

const OPTIONS = { strategy: consecutive({ threshold: 2 }), halfOpenAfterMs: 1_000, probeTimeoutMs: 5_000 };
const serverError = (message = 'upstream 503') =>
  new KeelError('provider.server_error', message, { status: 503 });
const succeed = () => Promise.resolve('ok');

/** A breaker in "this process", and a way to start its twin in another one from a snapshot taken through JSON. */
function setup(options: CircuitBreakerOptions = {}) {
  const clock = new FakeClock(0);
  const breaker = circuitBreaker({ ...OPTIONS, clock, ...options });
  const trip = async (error: unknown = serverError()) => {
    await breaker.execute(() => Promise.reject(serverError())).catch(() => undefined);
    await breaker.execute(() => Promise.reject(error)).catch(() => undefined);
  };
  const twin = (snapshot: unknown = JSON.parse(JSON.stringify(breaker))) =>
    circuitBreaker({ ...OPTIONS, clock, initialState: snapshot as BreakerSnapshot, ...options });
  return { clock, breaker, trip, twin };
}

async function refusal(promise: Promise<unknown>): Promise<KeelError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!KeelError.isInstance(error) || error.code !== 'policy.circuit_open') {
    throw new Error(`expected policy.circuit_open, got ${String(error)}`);
  }
  return error;
}

describe('circuitBreaker restored from a half-open snapshot', () => {
  it('admits no probe of its own until the probes running at the snapshot are due, then probes', async () => {
    const { clock, breaker, trip, twin } = setup();
    await trip();
    await clock.advance(1_000);
    // This process probes (due at 6_000); the snapshot is taken while the probe runs.
    const probe = breaker.execute(() => new Promise<string>(() => {}));
    await clock.advance(2_000);
    const snapshot = breaker.toJSON();
    expect(snapshot).toMatchObject({ state: 'half-open', probesUntilMs: 6_000 });

    const other = twin();
    expect(other.state).toBe('open');
    const refused = await refusal(other.execute(succeed));
    expect(refused.retryAfterMs).toBe(3_000);
    expect(refused.data).toEqual({ breaker: 'circuit-breaker', state: 'open', remainingMs: 3_000 });
    await clock.advance(3_000);
    expect(other.state).toBe('half-open');
    await expect(other.execute(succeed)).resolves.toBe('ok');
    expect(other.state).toBe('closed');
    void probe;
  });

  it('keeps the open period growing from where it was', async () => {
    const { clock, breaker, trip, twin } = setup({ halfOpenAfterMs: { initialMs: 1_000, factor: 2 } });
    await trip();
    await clock.advance(1_000);
    void breaker.execute(() => new Promise<string>(() => {}));
    const other = twin();
    await clock.advance(5_000);
    await other.execute(() => Promise.reject(serverError())).catch(() => undefined);
    // The snapshot's one open in a row, then this failed probe: the second period, 2 s.
    expect(other.toJSON()).toMatchObject({ state: 'open', consecutiveOpens: 2, openUntilMs: 8_000 });
  });

  it('is half-open with every slot free when no probe was running at the snapshot', async () => {
    const { clock, breaker, trip, twin } = setup();
    await trip();
    await clock.advance(1_000);
    expect(breaker.toJSON()).toMatchObject({ state: 'half-open', probesUntilMs: null });
    const other = twin();
    expect(other.state).toBe('half-open');
    await expect(other.execute(succeed)).resolves.toBe('ok');
  });

  it('is held open for one probe timeout when the snapshot does not say which probes ran (older keel)', async () => {
    const { clock, twin } = setup();
    const older = {
      version: 1,
      state: 'half-open',
      openUntilMs: null,
      consecutiveOpens: 1,
      probeSuccesses: 0,
      strategy: 'consecutive',
      window: null,
    };
    const other = twin(older);
    expect((await refusal(other.execute(succeed))).retryAfterMs).toBe(5_000);
    await clock.advance(5_000);
    await expect(other.execute(succeed)).resolves.toBe('ok');
  });
});

describe('circuitBreaker restored from a snapshot: the failure that opened it', () => {
  it('comes back as the cause of its refusals, rebuilt from its serialised form', async () => {
    const { trip, twin } = setup();
    await trip(serverError('upstream 503 for key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789'));
    const other = twin();
    const cause = (await refusal(other.execute(succeed))).cause;
    expect(KeelError.isInstance(cause) && cause.code).toBe('provider.server_error');
    expect((cause as KeelError).status).toBe(503);
    expect((cause as KeelError).message).toMatch(/^upstream 503 for key /);
    expect((cause as KeelError).message).not.toContain('abcdefghijklmnopqrstuvwxyz');
  });

  it('keeps a plain error’s name, message and code', async () => {
    const { breaker, trip, twin } = setup();
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    await trip(reset);
    const snapshot = JSON.parse(JSON.stringify(breaker));
    expect(snapshot.cause).toEqual({
      name: 'Error',
      message: 'read ECONNRESET',
      data: { code: 'ECONNRESET' },
    });
    const cause = (await refusal(twin(snapshot).execute(succeed))).cause as Error & { code?: string };
    expect(cause.message).toBe('read ECONNRESET');
    expect(cause.code).toBe('ECONNRESET');
  });

  it('is dropped once the breaker closes', async () => {
    const { clock, breaker, trip } = setup();
    await trip();
    expect(breaker.toJSON().cause).toMatchObject({ code: 'provider.server_error' });
    await clock.advance(1_000);
    await breaker.execute(succeed);
    expect(breaker.toJSON()).toMatchObject({ state: 'closed', cause: null, probesUntilMs: null });
  });
});
