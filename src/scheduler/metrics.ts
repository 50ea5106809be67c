/**
 * The metrics of due work, rendered at `GET /metrics` and reported as
 * OpenTelemetry instruments (`src/telemetry/instruments.ts`).
 * @module
 */

import { Counter } from "../telemetry/instruments.ts";

/** The due work this process did. */
export class DueWorkMetrics {
  readonly #expired = new Counter({
    name: "intents_expired_total",
    otelName: "intents.expired",
    help: "Pending intents whose expiry this process recorded.",
    unit: "{intent}",
  });

  /** Counts a pending intent whose expiry this process recorded. */
  intentExpired(): void {
    this.#expired.inc([]);
  }

  /** The lines `GET /metrics` adds. */
  readonly render = (): string[] => this.#expired.render();
}
