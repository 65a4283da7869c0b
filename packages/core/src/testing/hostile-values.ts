/**
 * Values a provider, tool, guardrail or store may throw that break code reading them: proxies, throwing getters,
 * forged brands. Each `make` returns a fresh value. What the traps and getters throw is itself hostile (a revoked
 * proxy), so that a `catch (error) { String(error) }` fails too.
 */
export interface HostileValue {
  readonly name: string;
  readonly make: () => unknown;
}

/** A proxy that has been revoked: every operation on it (`get`, `instanceof`, `Array.isArray`) throws. */
export function revokedProxy(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

const PROXY_TRAPS = [
  'get',
  'set',
  'has',
  'ownKeys',
  'getOwnPropertyDescriptor',
  'getPrototypeOf',
  'setPrototypeOf',
  'defineProperty',
  'deleteProperty',
  'isExtensible',
  'preventExtensions',
] as const;

/** A proxy whose every trap throws a revoked proxy. */
export function throwingProxy(): object {
  const handler: ProxyHandler<object> = {};
  for (const trap of PROXY_TRAPS) {
    (handler as Record<string, unknown>)[trap] = () => {
      throw revokedProxy();
    };
  }
  return new Proxy({}, handler);
}

// Everything keel (or Node, or a promise) may read from a thrown value.
const READ_KEYS: readonly PropertyKey[] = [
  'message',
  'name',
  'stack',
  'cause',
  'code',
  'status',
  'statusCode',
  'headers',
  'response',
  'errors',
  'error',
  'body',
  'data',
  'then',
  'constructor',
  'toJSON',
  'toString',
  'valueOf',
  Symbol.toPrimitive,
  Symbol.for('keel.error'),
  Symbol.for('keel.control-signal'),
  Symbol.for('keel.directive'),
];

function defineThrowingGetters<T extends object>(target: T): T {
  for (const key of READ_KEYS) {
    // V8 reads an Error's own `stack` when it is redefined in place: remove it first.
    Reflect.deleteProperty(target, key);
    Object.defineProperty(target, key, {
      enumerable: true,
      configurable: true,
      get() {
        throw revokedProxy();
      },
    });
  }
  return target;
}

/** A thrown value carrying the keel brand with garbage everywhere else (a cyclic cause included). */
function forgedBrand(): object {
  const forged: Record<PropertyKey, unknown> = {
    [Symbol.for('keel.error')]: true,
    code: { toString: () => 'tool.failed' },
    name: 42,
    message: ['not', 'a', 'string'],
    category: null,
    retryable: 'yes',
    retryAfterMs: -1,
    status: 'teapot',
    provider: {},
    data: 'garbage',
    guidance: 7,
  };
  forged.cause = forged;
  return forged;
}

/** The brand and a known code, but fields that are traps: proxies and throwing getters. */
function forgedBrandWithTraps(): object {
  const forged: Record<PropertyKey, unknown> = {
    [Symbol.for('keel.error')]: true,
    code: 'tool.failed',
    message: 'looks fine',
    category: 'tool',
    retryable: false,
    data: throwingProxy(),
    cause: revokedProxy(),
  };
  Object.defineProperty(forged, 'guidance', {
    enumerable: true,
    get() {
      throw revokedProxy();
    },
  });
  return forged;
}

/** A KeelError as a later keel would make it: every field well formed, but a code this keel does not know. */
export function newerKeelError(): Error {
  const error = new Error('the provider teleported the request');
  Object.assign(error, {
    [Symbol.for('keel.error')]: true,
    name: 'KeelError',
    code: 'provider.teleported',
    category: 'provider',
    retryable: false,
    status: 418,
    provider: 'future',
    data: { hops: 3 },
    guidance: 'Upgrade keel.',
  });
  Object.defineProperty(error, 'toJSON', {
    value: () => ({ name: 'KeelError', message: error.message, code: 'provider.teleported' }),
  });
  return error;
}

/** The hostile values every boundary of keel is tested with. */
export const HOSTILE_VALUES: readonly HostileValue[] = [
  { name: 'a revoked proxy', make: revokedProxy },
  { name: 'a proxy whose every trap throws', make: throwingProxy },
  { name: 'an object whose getters throw', make: () => defineThrowingGetters({}) },
  { name: 'an Error whose getters throw', make: () => defineThrowingGetters(new Error('hidden')) },
  { name: 'a forged keel brand with garbage fields', make: forgedBrand },
  { name: 'a forged keel brand whose fields are traps', make: forgedBrandWithTraps },
  { name: 'a KeelError from a newer keel with an unknown code', make: newerKeelError },
];
