/**
 * The metrics of webhook delivery, rendered into `GET /metrics` with the
 * rest (`MetricsRegistry.include`). Deliveries, attempt latency, leases and
 * lag are this process's: the endpoints it delivers to. The count of
 * endpoints by status is the store's, the same on every process (take the
 * max across processes, not the sum).
 *
 * Labels come from bounded sets: outcomes, statuses, and endpoint ids (at
 * most 100 endpoints exist; a series goes when this process stops
 * delivering to its endpoint).
 * @module
 */

import { Counter, Histogram, labelText, LATENCY_BUCKETS, number } from "../http/metrics.ts";
import type { DeliveryResult } from "../webhooks/deliver.ts";
import { type EndpointStatus, judgeAttempt } from "../webhooks/endpoint.ts";

/**
 * How an attempt ended: `acknowledged` (2xx), `gone` (410), `http_error`
 * (another status), or how it failed without an answer: `redirect`,
 * `timeout`, `connection`, `refused_address`, `refused_url`.
 */
export type DeliveryOutcome =
  | "acknowledged"
  | "gone"
  | "http_error"
  | "redirect"
  | "timeout"
  | "connection"
  | "refused_address"
  | "refused_url";

/** The outcome label of an attempt's result. */
export function outcomeOf(result: Pick<DeliveryResult, "status" | "error">): DeliveryOutcome {
  if (result.error !== null) return result.error;
  const verdict = judgeAttempt(result);
  return verdict === "failed" ? "http_error" : verdict;
}

/** A gauge by one label, whose series can be removed. */
class LabeledGauge {
  readonly #values = new Map<string, number>();
  constructor(readonly name: string, readonly help: string, readonly label: string) {}

  set(value: string, to: number): void {
    this.#values.set(value, to);
  }

  delete(value: string): void {
    this.#values.delete(value);
  }

  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`];
    for (const [value, to] of this.#values) {
      lines.push(`${this.name}${labelText([this.label], [value])} ${number(to)}`);
    }
    return lines;
  }
}

/** Webhook delivery metrics of one process. */
export class WebhookMetrics {
  readonly #deliveries = new Counter(
    "intents_webhook_deliveries_total",
    "Webhook delivery attempts made by this process, by outcome.",
    ["outcome"],
  );
  readonly #duration = new Histogram(
    "intents_webhook_attempt_duration_seconds",
    "Time from the start of a webhook delivery attempt to its answer or failure.",
    [],
    LATENCY_BUCKETS,
  );
  readonly #lag = new LabeledGauge(
    "intents_webhook_lag_events",
    "Events of the feed after the last one an endpoint acknowledged, for the endpoints this process delivers to.",
    "endpoint",
  );
  #held = 0;
  readonly #endpoints = new LabeledGauge(
    "intents_webhook_endpoints",
    "Webhook endpoints in the store, by status (the same on every process).",
    "status",
  );

  /** Counts one attempt and its duration. */
  attempt(result: Pick<DeliveryResult, "status" | "error" | "durationMs">): void {
    this.#deliveries.inc([outcomeOf(result)]);
    this.#duration.observe([], result.durationMs / 1000);
  }

  /** Sets an endpoint's lag, or removes it (`null`) when this process stops delivering to it. */
  lag(endpoint: string, events: number | null): void {
    if (events === null) this.#lag.delete(endpoint);
    else this.#lag.set(endpoint, events);
  }

  /** Sets how many leases this process holds. */
  held(count: number): void {
    this.#held = count;
  }

  /** Sets the store's endpoints by status. */
  endpoints(counts: Readonly<Record<EndpointStatus, number>>): void {
    for (const [status, count] of Object.entries(counts)) this.#endpoints.set(status, count);
  }

  /** The lines `GET /metrics` adds. */
  readonly render = (): string[] => [
    ...this.#deliveries.render(),
    ...this.#duration.render(),
    ...this.#lag.render(),
    "# HELP intents_webhook_leases_held Webhook endpoints this process delivers to now (it holds their leases).",
    "# TYPE intents_webhook_leases_held gauge",
    `intents_webhook_leases_held ${this.#held}`,
    ...this.#endpoints.render(),
  ];
}
