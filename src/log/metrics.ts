/**
 * The verifiable log's metrics (docs/interface.md §14, "Telemetry"), rendered
 * into `GET /metrics` with the rest and reported as OpenTelemetry
 * instruments (`src/telemetry/instruments.ts`). The tree's size, the
 * checkpoint's age and the integration lag are known to the process that
 * integrates (it holds the lease); the others report 0, so take the largest
 * across processes. Witness outcomes are counted by the process that
 * submits. The fork alarm is 1 on a process that found the fork or read its
 * record; the record stops every process's signing.
 *
 * Labels come from bounded sets: at most 15 witness names, and outcomes.
 * @module
 */

import { Counter, Gauge, Histogram, LATENCY_BUCKETS } from "../telemetry/instruments.ts";

/**
 * How a witness call ended: `cosigned`, `conflict` (a 409 followed),
 * `fork`, `configuration` (403 or 404), `rejected` (400 or another 4xx),
 * `bad_answer` (a 200 without a valid cosignature), `http_error` (5xx or
 * another status), or `unreachable` (no answer within the time limit).
 */
export type WitnessOutcome =
  | "cosigned"
  | "conflict"
  | "fork"
  | "configuration"
  | "rejected"
  | "bad_answer"
  | "http_error"
  | "unreachable";

/** The log's metrics of one process. */
export class LogMetrics {
  readonly #size = new Gauge({
    name: "intents_log_tree_size",
    otelName: "intents.log.tree.size",
    help: "Entries in the log's tree, as the process that integrates last extended it.",
    unit: "{entry}",
    additive: false,
  });
  readonly #age = new Gauge({
    name: "intents_log_checkpoint_age_seconds",
    otelName: "intents.log.checkpoint.age",
    help: "Seconds since the newest checkpoint was signed (or first seen) by the process " +
      "that integrates; it grows while no event arrives.",
    unit: "s",
    additive: false,
  });
  readonly #lag = new Gauge({
    name: "intents_log_integration_lag_seconds",
    otelName: "intents.log.integration.lag",
    help: "Seconds the log's tree has been behind the feed (0 when it covers it).",
    unit: "s",
    additive: false,
  });
  readonly #witness = new Counter({
    name: "intents_log_witness_calls_total",
    otelName: "intents.log.witness.calls",
    help: "Calls to witnesses made by this process, by witness and outcome.",
    unit: "{call}",
    labels: [
      { prometheus: "witness", otel: "intents.log.witness" },
      { prometheus: "outcome", otel: "intents.outcome" },
    ],
  });
  readonly #duration = new Histogram({
    name: "intents_log_witness_call_duration_seconds",
    otelName: "intents.log.witness.call.duration",
    help: "Time from the start of a witness call to its answer or failure.",
    unit: "s",
  }, LATENCY_BUCKETS);
  readonly #fork = new Gauge({
    name: "intents_log_fork_alarm",
    otelName: "intents.log.fork.alarm",
    help: "1 when a fork was found and the log signs no checkpoint any more, else 0.",
    unit: "1",
    additive: false,
  });
  readonly #now: () => number;
  /** While this process integrates: when the newest checkpoint was signed or first seen. */
  #signedAt: number | null = null;
  /** While this process integrates and the tree is behind the feed: since when. */
  #behindSince: number | null = null;

  /** @param now the clock (Unix ms); default `Date.now`. */
  constructor(now: () => number = Date.now) {
    this.#now = now;
    this.#age.sampleFrom(() =>
      this.#signedAt === null ? 0 : Math.max(0, (this.#now() - this.#signedAt) / 1000)
    );
    this.#lag.sampleFrom(() =>
      this.#behindSince === null ? 0 : Math.max(0, (this.#now() - this.#behindSince) / 1000)
    );
  }

  /** The tree reached `size`; `caughtUp` when it covers the feed. */
  integrated(size: number, caughtUp: boolean): void {
    this.#size.set([], size);
    if (caughtUp) this.#behindSince = null;
    else this.#behindSince ??= this.#now();
  }

  /** A checkpoint was signed now, or one newer than the last was seen. */
  checkpointed(): void {
    this.#signedAt = this.#now();
  }

  /** This process stopped integrating: it knows no more than the others. */
  released(): void {
    this.#size.set([], 0);
    this.#signedAt = null;
    this.#behindSince = null;
  }

  /** Counts a witness call and its duration. */
  witnessCall(witness: string, outcome: WitnessOutcome, durationMs: number): void {
    this.#witness.inc([witness, outcome]);
    this.#duration.observe([], durationMs / 1000);
  }

  /** Raises the fork alarm. */
  fork(): void {
    this.#fork.set([], 1);
  }

  /** The lines `GET /metrics` adds. */
  readonly render = (): string[] => [
    ...this.#size.render(),
    ...this.#age.render(),
    ...this.#lag.render(),
    ...this.#witness.render(),
    ...this.#duration.render(),
    ...this.#fork.render(),
  ];
}
