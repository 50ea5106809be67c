/**
 * What `GET /metrics` serves: the series of every part of one process (the
 * edge's requests, due work, webhook delivery, the feed), each part
 * rendering its own through `instruments.ts`, joined in the Prometheus text
 * exposition format 0.0.4 in the order the parts were included.
 * @module
 */

/**
 * The parts whose series one scrape renders.
 *
 * @example
 * ```ts
 * import { Counter } from "./instruments.ts";
 *
 * const starts = new Counter({
 *   name: "example_starts_total",
 *   otelName: "example.starts",
 *   help: "Starts.",
 *   unit: "{start}",
 * });
 * const metrics = new MetricsRegistry();
 * metrics.include(() => starts.render());
 * starts.inc([]);
 * metrics.render(); // "# HELP example_starts_total Starts.\n…example_starts_total 1\n"
 * ```
 */
export class MetricsRegistry {
  readonly #parts: (() => string[])[] = [];

  /** Renders `render()`'s lines in every scrape, after those of the parts included before. */
  include(render: () => string[]): void {
    this.#parts.push(render);
  }

  /** Every part's series in the Prometheus text format. */
  render(): string {
    return this.#parts.flatMap((render) => render()).join("\n") + "\n";
  }
}
