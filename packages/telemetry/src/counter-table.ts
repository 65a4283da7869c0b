import type { MetricDefinition } from './metric-catalogue.js';

/** Metric attributes: attribute key to value. Keys absent from a measurement are left out of its series. */
export type MetricAttributes = Readonly<Record<string, string>>;

/** One series of a metric and its value now: what a sink reports when metrics are collected. */
export interface MetricReading {
  readonly metric: MetricDefinition;
  readonly value: number;
  readonly attributes: MetricAttributes;
}

/** A counter's (or an up-down counter's) series: its frozen attributes and its running total. */
export interface CounterSeries extends MetricReading {
  value: number;
}

/**
 * keel's counters, summed in process and read when metrics are collected: counting a measurement is an addition to
 * a series found once per label combination, with no hashing of attributes and nothing allocated.
 */
export class CounterTable {
  private readonly byKey = new Map<string, CounterSeries>();

  /** The series of `metric` with `attributes`, made (with a frozen copy of them) the first time. */
  series(metric: MetricDefinition, attributes: MetricAttributes): CounterSeries {
    // Each caller builds its attributes in one fixed key order, so equal label sets give equal keys.
    const key = `${metric.name}${JSON.stringify(attributes)}`;
    let series = this.byKey.get(key);
    if (series === undefined) {
      series = { metric, value: 0, attributes: Object.freeze({ ...attributes }) };
      this.byKey.set(key, series);
    }
    return series;
  }

  /** Adds `value` to a series (made the first time). For measurements too rare to keep their series at hand. */
  add(metric: MetricDefinition, value: number, attributes: MetricAttributes): void {
    this.series(metric, attributes).value += value;
  }

  /** Every series counted so far. */
  values(): IterableIterator<CounterSeries> {
    return this.byKey.values();
  }
}

/** Values looked up by three strings, without building a key string per lookup. */
export class KeyedByThree<V> {
  private readonly root = new Map<string, Map<string, Map<string, V>>>();

  get(first: string, second: string, third: string): V | undefined {
    return this.root.get(first)?.get(second)?.get(third);
  }

  set(first: string, second: string, third: string, value: V): void {
    let seconds = this.root.get(first);
    if (seconds === undefined) {
      seconds = new Map();
      this.root.set(first, seconds);
    }
    let thirds = seconds.get(second);
    if (thirds === undefined) {
      thirds = new Map();
      seconds.set(second, thirds);
    }
    thirds.set(third, value);
  }
}
