/**
 * The metrics of webhook delivery, rendered into `GET /metrics` with the
 * rest (`MetricsRegistry.include`) and reported as OpenTelemetry instruments
 * (`src/telemetry/instruments.ts`). Deliveries, attempt latency, leases and
 * lag are this process's: the endpoints it delivers to. The count of
 * endpoints by status is the store's, the same on every process (take the
 * max across processes, not the sum).
 *
 * Labels come from bounded sets: outcomes, statuses, and endpoint ids (at
 * most 100 endpoints exist; a series goes when this process stops
 * delivering to its endpoint).
 * @module
 */

import { Counter, Gauge, Histogram, LATENCY_BUCKETS } from "../telemetry/instruments.ts";
import type { DeliveryResult } from "../delivery/deliver.ts";
import { type DeliveryError, type EndpointStatus, judgeAttempt } from "../webhooks/endpoint.ts";

/**
 * How an attempt ended: `acknowledged` (2xx), `gone` (410), `http_error`
 * (another status), or how it failed without an answer (a {@link DeliveryError}).
 */
export type DeliveryOutcome = "acknowledged" | "gone" | "http_error" | DeliveryError;

/** The outcome label of an attempt's result. */
export function outcomeOf(result: Pick<DeliveryResult, "status" | "error">): DeliveryOutcome {
  if (result.error !== null) return result.error;
  const verdict = judgeAttempt(result);
  return verdict === "failed" ? "http_error" : verdict;
}

/** Webhook delivery metrics of one process. */
export class WebhookMetrics {
  readonly #deliveries = new Counter({
    name: "intents_webhook_deliveries_total",
    otelName: "intents.webhook.deliveries",
    help: "Webhook delivery attempts made by this process, by outcome.",
    unit: "{attempt}",
    labels: [{ prometheus: "outcome", otel: "intents.outcome" }],
  });
  readonly #duration = new Histogram({
    name: "intents_webhook_attempt_duration_seconds",
    otelName: "intents.webhook.attempt.duration",
    help: "Time from the start of a webhook delivery attempt to its answer or failure.",
    unit: "s",
  }, LATENCY_BUCKETS);
  readonly #lag = new Gauge({
    name: "intents_webhook_lag_events",
    otelName: "intents.webhook.lag",
    help:
      "Events of the feed after the last one an endpoint acknowledged, for the endpoints this process delivers to.",
    unit: "{event}",
    labels: [{ prometheus: "endpoint", otel: "intents.webhook.endpoint" }],
    additive: false,
  });
  readonly #held = new Gauge({
    name: "intents_webhook_leases_held",
    otelName: "intents.webhook.leases",
    help: "Webhook endpoints this process delivers to now (it holds their leases).",
    unit: "{lease}",
    additive: true,
  });
  readonly #endpoints = new Gauge({
    name: "intents_webhook_endpoints",
    otelName: "intents.webhook.endpoints",
    help: "Webhook endpoints in the store, by status (the same on every process).",
    unit: "{endpoint}",
    labels: [{ prometheus: "status", otel: "intents.webhook.status" }],
    // The store's count, reported alike by every process: not to be summed.
    additive: false,
  });

  /** Counts one attempt and its duration. */
  attempt(result: Pick<DeliveryResult, "status" | "error" | "durationMs">): void {
    this.#deliveries.inc([outcomeOf(result)]);
    this.#duration.observe([], result.durationMs / 1000);
  }

  /** Sets an endpoint's lag, or removes it (`null`) when this process stops delivering to it. */
  lag(endpoint: string, events: number | null): void {
    if (events === null) this.#lag.delete([endpoint]);
    else this.#lag.set([endpoint], events);
  }

  /** Sets how many leases this process holds. */
  held(count: number): void {
    this.#held.set([], count);
  }

  /** Sets the store's endpoints by status. */
  endpoints(counts: Readonly<Record<EndpointStatus, number>>): void {
    for (const [status, count] of Object.entries(counts)) this.#endpoints.set([status], count);
  }

  /** The lines `GET /metrics` adds. */
  readonly render = (): string[] => [
    ...this.#deliveries.render(),
    ...this.#duration.render(),
    ...this.#lag.render(),
    ...this.#held.render(),
    ...this.#endpoints.render(),
  ];
}
