/**
 * A webhook delivery attempt as a span (docs/interface.md §13):
 * `intents.webhook.attempt`, a client span in a trace of its own (a
 * deliverer serves no request). Its attributes say which endpoint and event,
 * and how the attempt ended; never the URL (its query may hold a
 * credential), a header, the signature or the secret.
 * @module
 */

import type { IntentEvent } from "../domain/intent.ts";
import type { DeliveryResult } from "../delivery/deliver.ts";
import type { AttemptRecord, Endpoint } from "../webhooks/endpoint.ts";
import { type Span, SpanStatusCode, startSpan } from "../telemetry/tracing.ts";
import { outcomeOf } from "./metrics.ts";

/** Starts an attempt's span; undefined when not tracing. */
export function startAttemptSpan(endpointId: string, event: IntentEvent): Span | undefined {
  return startSpan("intents.webhook.attempt", {
    root: true,
    kind: "client",
    attributes: {
      "http.request.method": "POST",
      "intents.webhook.endpoint": endpointId,
      "intents.event.position": event.position,
      "intents.event.type": event.type,
    },
  });
}

/**
 * Ends an attempt's span with what became of it: `intents.outcome` (as
 * `intents_webhook_deliveries_total` counts it), the answer's status, the
 * failure (`error.type`), the attempt's number, and the endpoint's status
 * after it (`disabled` with its reason when this attempt disabled it).
 */
export function endAttemptSpan(
  span: Span | undefined,
  result: Pick<DeliveryResult, "status" | "error">,
  record: Pick<AttemptRecord, "attempt">,
  after: Pick<Endpoint, "status" | "disabledReason">,
): void {
  if (span === undefined) return;
  const outcome = outcomeOf(result);
  span.setAttributes({ "intents.outcome": outcome, "intents.webhook.attempt": record.attempt });
  if (result.status !== null) span.setAttribute("http.response.status_code", result.status);
  if (result.error !== null) span.setAttribute("error.type", result.error);
  if (after.status === "disabled") {
    span.setAttribute("intents.webhook.disabled_reason", after.disabledReason ?? "unknown");
  }
  if (outcome !== "acknowledged") span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** Ends an attempt's span that was cut short (the deliverer stopped, or its lease was lost). */
export function abandonAttemptSpan(span: Span | undefined): void {
  span?.setAttribute("intents.outcome", "stopped");
  span?.end();
}
