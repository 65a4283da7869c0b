/**
 * Puts on a record an own, enumerable property whose value is made from `source` on its first read, then kept: the
 * record spreads, clones and serialises with the value, and the work is done only when something reads it.
 */
export type LazyProperty<Source> = <Target extends object>(target: Target, source: Source) => Target;

/**
 * A {@link LazyProperty} named `key`, its value `compute(source)`. The getter is one function, made here once, for
 * every record: V8 keeps an accessor in the object's hidden class, so a getter made per record (an object literal's
 * `get key() {}`, a closure given to `Object.defineProperty`) gives each record a class of its own, held in old
 * space, and that class holds the getter's closure and all it reaches through every young-generation collection
 * until a full one. On a durable run's writes that was most of what each collection kept (measured: 2.5 MB of a
 * run's objects kept and promoted a collection with such getters, 0.3 MB without, on `bench:checkpoints`' run).
 */
export function lazyProperty<Source, Value>(
  key: string,
  compute: (source: Source) => Value,
): LazyProperty<Source> {
  const sourceKey = Symbol(`${key} (source)`);
  const valueKey = Symbol(key);
  const descriptor: PropertyDescriptor = {
    enumerable: true,
    configurable: true,
    get(this: Record<symbol, unknown>): unknown {
      if (!(valueKey in this)) this[valueKey] = compute(this[sourceKey] as Source);
      return this[valueKey];
    },
  };
  return (target, source) => {
    (target as Record<symbol, unknown>)[sourceKey] = source;
    Object.defineProperty(target, key, descriptor);
    return target;
  };
}
