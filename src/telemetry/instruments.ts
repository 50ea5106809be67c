/**
 * The service's counters, gauges and histograms, each defined once and read
 * two ways: the Prometheus text exposition format 0.0.4 of `GET /metrics`,
 * and OpenTelemetry instruments (docs/interface.md §13; docs/architecture.md).
 * Counters and gauges are observable instruments that read the same series
 * at each export; a histogram is recorded in both, with the same buckets.
 * Series are keyed by their label values joined with NUL, which no label
 * value holds; every label value comes from a bounded set.
 * @module
 */

import { type Attributes, metrics, type ObservableResult } from "@opentelemetry/api";

/** Upper bounds of the latency histograms, in seconds. */
export const LATENCY_BUCKETS = [
  0.001,
  0.0025,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
] as const;

/** The service's meter: the runtime's when telemetry is on, a no-op otherwise. */
const meter = metrics.getMeter("intents");

/** A label: its Prometheus name, its OpenTelemetry attribute, and whether that is a number. */
export interface Label {
  prometheus: string;
  otel: string;
  /** The attribute is the label's value as an integer (an HTTP status). */
  integer?: boolean;
  /** A value that stands for no attribute (the route of a request no route matched). */
  absent?: string;
}

/** What names and describes an instrument. */
export interface Definition {
  /** Its Prometheus name, e.g. `intents_accepted_total`. */
  name: string;
  /** Its OpenTelemetry name, e.g. `intents.accepted`. */
  otelName: string;
  /** What it counts (HELP, and the instrument's description). */
  help: string;
  /** Its unit in UCUM (`s`, `{intent}`). */
  unit: string;
  labels?: readonly Label[];
}

/** Escapes a label value (exposition format: backslash, quote, newline). */
function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/** `{name="value",…}` of the exposition format, or "" without labels. */
export function labelText(names: readonly string[], values: readonly string[]): string {
  if (names.length === 0) return "";
  return `{${names.map((n, i) => `${n}="${escapeLabel(values[i])}"`).join(",")}}`;
}

/** Renders a float the way Prometheus parses it. */
export function number(value: number): string {
  if (value === Infinity) return "+Inf";
  return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(15)));
}

/** The OpenTelemetry attributes of a series' label values. */
function attributesOf(labels: readonly Label[], values: readonly string[]): Attributes {
  const attributes: Attributes = {};
  labels.forEach((label, i) => {
    if (values[i] === label.absent) return;
    attributes[label.otel] = label.integer ? Number(values[i]) : values[i];
  });
  return attributes;
}

/** One series of a counter or gauge: its label values, value, and attributes once exported. */
interface Series {
  labels: string[];
  value: number;
  attributes?: Attributes;
}

/** Series by label values, with their two renderings. */
abstract class Instrument {
  protected readonly series = new Map<string, Series>();
  readonly labelNames: readonly string[];
  readonly #labels: readonly Label[];

  constructor(readonly definition: Definition, readonly type: "counter" | "gauge") {
    this.#labels = definition.labels ?? [];
    this.labelNames = this.#labels.map((label) => label.prometheus);
  }

  /** Brings the series up to date before they are read; nothing by default. */
  protected refresh(): void {}

  /** The HELP and TYPE lines and a sample per series. */
  render(): string[] {
    this.refresh();
    const { name, help } = this.definition;
    const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} ${this.type}`];
    for (const { labels, value } of this.series.values()) {
      lines.push(`${name}${labelText(this.labelNames, labels)} ${number(value)}`);
    }
    return lines;
  }

  /** Reports every series to OpenTelemetry (an observable instrument's callback). */
  protected readonly report = (result: ObservableResult): void => {
    this.refresh();
    for (const series of this.series.values()) {
      series.attributes ??= attributesOf(this.#labels, series.labels);
      result.observe(series.value, series.attributes);
    }
  };
}

/**
 * A counter by labels: `intents_…_total` in Prometheus, an observable
 * counter in OpenTelemetry.
 */
export class Counter extends Instrument {
  constructor(definition: Definition) {
    super(definition, "counter");
    const { otelName, help: description, unit } = definition;
    meter.createObservableCounter(otelName, { description, unit }).addCallback(this.report);
  }

  /** Adds `by` (default 1) to the series of these label values. */
  inc(labels: string[], by = 1): void {
    const key = labels.join("\u0000");
    const entry = this.series.get(key);
    if (entry) entry.value += by;
    else this.series.set(key, { labels, value: by });
  }
}

/**
 * A gauge by labels, whose series can be removed: a gauge in Prometheus; in
 * OpenTelemetry an observable up-down counter when its series add up across
 * processes (`additive`: things this process holds), else an observable gauge.
 */
export class Gauge extends Instrument {
  #sample: (() => number) | undefined;

  constructor(definition: Definition & { additive: boolean }) {
    super(definition, "gauge");
    const { otelName, help: description, unit } = definition;
    const observable = definition.additive
      ? meter.createObservableUpDownCounter(otelName, { description, unit })
      : meter.createObservableGauge(otelName, { description, unit });
    observable.addCallback(this.report);
    // A gauge without labels has its one series from the start, at 0.
    if (this.labelNames.length === 0) this.set([], 0);
  }

  /** Sets the series of these label values (`[]` for a gauge without labels). */
  set(labels: string[], value: number): void {
    const key = labels.join("\u0000");
    const entry = this.series.get(key);
    if (entry) entry.value = value;
    else this.series.set(key, { labels, value });
  }

  /** Adds to the series of these label values. */
  add(labels: string[], by: number): void {
    const key = labels.join("\u0000");
    this.set(labels, (this.series.get(key)?.value ?? 0) + by);
  }

  /** Reads a gauge without labels from `sample` whenever it is rendered or reported. */
  sampleFrom(sample: () => number): void {
    this.#sample = sample;
  }

  protected override refresh(): void {
    if (this.#sample) this.set([], this.#sample());
  }

  /** Removes the series of these label values. */
  delete(labels: string[]): void {
    this.series.delete(labels.join("\u0000"));
  }
}

/** One series of a histogram: counts per bucket (the last past every bound). */
interface HistogramSeries {
  labels: string[];
  counts: number[];
  sum: number;
  attributes: Attributes;
}

/**
 * A histogram by labels, with the same bucket bounds in both: each
 * observation is counted here and recorded in the OpenTelemetry histogram.
 */
export class Histogram {
  readonly #series = new Map<string, HistogramSeries>();
  readonly #labels: readonly Label[];
  readonly #otel;
  readonly labelNames: readonly string[];

  constructor(readonly definition: Definition, readonly buckets: readonly number[]) {
    this.#labels = definition.labels ?? [];
    this.labelNames = this.#labels.map((label) => label.prometheus);
    const { otelName, help: description, unit } = definition;
    this.#otel = meter.createHistogram(otelName, {
      description,
      unit,
      advice: { explicitBucketBoundaries: [...buckets] },
    });
  }

  /** Counts `value` in the series of these label values. */
  observe(labels: string[], value: number): void {
    const key = labels.join("\u0000");
    let series = this.#series.get(key);
    if (!series) {
      series = {
        labels,
        counts: new Array(this.buckets.length + 1).fill(0),
        sum: 0,
        attributes: attributesOf(this.#labels, labels),
      };
      this.#series.set(key, series);
    }
    let i = this.buckets.findIndex((bound) => value <= bound);
    if (i === -1) i = this.buckets.length;
    series.counts[i]++;
    series.sum += value;
    this.#otel.record(value, series.attributes);
  }

  /** The HELP and TYPE lines, and the buckets, sum and count of each series. */
  render(): string[] {
    const { name, help } = this.definition;
    const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} histogram`];
    const names = [...this.labelNames, "le"];
    for (const { labels, counts, sum } of this.#series.values()) {
      // Buckets are cumulative in the exposition format.
      let cumulative = 0;
      const bounds = [...this.buckets, Infinity];
      bounds.forEach((bound, i) => {
        cumulative += counts[i];
        const text = labelText(names, [...labels, number(bound)]);
        lines.push(`${name}_bucket${text} ${cumulative}`);
      });
      const text = labelText(this.labelNames, labels);
      lines.push(`${name}_sum${text} ${number(sum)}`);
      lines.push(`${name}_count${text} ${cumulative}`);
    }
    return lines;
  }
}

/** Media type of the text exposition format. */
export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
