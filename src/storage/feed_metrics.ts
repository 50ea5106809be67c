/**
 * The feed's metrics (docs/operations.md): how long staged events waited to
 * be moved, and how many writes gave up losing to other writers.
 * @module
 */

import { Counter, Histogram, LATENCY_BUCKETS } from "../telemetry/instruments.ts";

/** The feed's metrics of one process. */
export class FeedMetrics {
  readonly #wait = new Histogram({
    name: "intents_feed_wait_seconds",
    otelName: "intents.feed.wait",
    help:
      "Time from a commit's staging of its events to the move that put them into the feed, for the moves this process made.",
    unit: "s",
  }, LATENCY_BUCKETS);
  readonly #moves = new Counter({
    name: "intents_feed_moves_total",
    otelName: "intents.feed.moves",
    help: "Moves of staged events into the feed this process made.",
    unit: "{move}",
  });
  readonly #contended = new Counter({
    name: "intents_store_contended_total",
    otelName: "intents.store.contended",
    help:
      "Writes this process gave up after other writers of the same data kept coming first (answered 503).",
    unit: "{write}",
  });

  /** Counts a move and how long each staged commit it moved waited (ms). */
  readonly moved = (waitsMs: readonly number[]): void => {
    this.#moves.inc([]);
    for (const ms of waitsMs) this.#wait.observe([], Math.max(0, ms) / 1000);
  };

  /** Counts a write given up under contention. */
  readonly contended = (): void => this.#contended.inc([]);

  /** The Prometheus lines. */
  readonly render = (): string[] => [
    ...this.#wait.render(),
    ...this.#moves.render(),
    ...this.#contended.render(),
  ];
}
