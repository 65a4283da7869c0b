import type { Attributes, Histogram } from '@opentelemetry/api';

/** Most measurements held before they are recorded whatever happens: a bound on memory, not a batch size to tune. */
export const MAX_BUFFERED_MEASUREMENTS = 512;

/**
 * Histogram measurements held as a run goes and recorded together: at the run's end, when the SDK collects (before it
 * reads the histograms, so that no collection misses one), or past {@link MAX_BUFFERED_MEASUREMENTS}. Each
 * measurement stays one observation with its own value and attributes (a model call's duration and tokens keep their
 * per-operation meaning); only the moment the SDK is called moves, to where its code and data are warm, instead of
 * between a step's network waits. Held in parallel arrays that are reused, so a step allocates nothing for them.
 */
export class HistogramBuffer {
  private readonly histograms: Histogram[] = [];
  private readonly values: number[] = [];
  private readonly attributes: Attributes[] = [];

  /** Holds one measurement of `histogram`. */
  record(histogram: Histogram, value: number, attributes: Attributes): void {
    this.histograms.push(histogram);
    this.values.push(value);
    this.attributes.push(attributes);
    if (this.histograms.length >= MAX_BUFFERED_MEASUREMENTS) this.flush();
  }

  /** Records every measurement held, in the order they came. */
  flush(): void {
    const { histograms, values, attributes } = this;
    const count = histograms.length;
    for (let index = 0; index < count; index++)
      (histograms[index] as Histogram).record(values[index] as number, attributes[index]);
    histograms.length = 0;
    values.length = 0;
    attributes.length = 0;
  }
}
