/**
 * The edge's metrics of one server process (docs/interface.md §13), rendered
 * at `GET /metrics` with the other parts' and reported as OpenTelemetry
 * instruments when telemetry is on. Every label value comes from a bounded
 * set (route templates, known methods, codes), so a client cannot grow them.
 * @module
 */

import {
  Counter,
  Gauge,
  Histogram,
  type Label,
  LATENCY_BUCKETS,
} from "../telemetry/instruments.ts";

const ROUTE: Label = { prometheus: "route", otel: "http.route", absent: "unmatched" };
const METHOD: Label = { prometheus: "method", otel: "http.request.method" };
const STATUS: Label = { prometheus: "status", otel: "http.response.status_code", integer: true };
const VARIANT: Label = { prometheus: "variant", otel: "intents.variant" };
const KIND: Label = { prometheus: "kind", otel: "intents.signature.kind" };
const OUTCOME: Label = { prometheus: "outcome", otel: "intents.outcome" };

const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]);

/** Whether labels and span names carry `method` as it is; any other is folded into one. */
export function isKnownMethod(method: string): boolean {
  return KNOWN_METHODS.has(method);
}

/** What `POST /intents` stored. */
export interface AcceptedIntent {
  variant: "A" | "B";
  kind: string;
  /** Stored pending approvals (a 202). */
  pending: boolean;
}

/** What a request's handler reports of what it did, for the metrics. */
export interface RequestOutcome {
  /** Set by `POST /intents` when it stored an intent (accepted, or pending approvals). */
  accepted?: AcceptedIntent;
  /** Set by `POST /intents/{id}/approvals` when it stored an approval. */
  approved?: { accepted: boolean };
  /** Set by `POST /intents/{id}/rejections` when it stored a rejection. */
  rejected?: { rejected: boolean };
  /** Set when the answer replays what was stored before (a retry). */
  replayed?: boolean;
  /** Set when a limit of docs/interface.md §12 refused the request. */
  limited?: "address" | "signer" | "auth" | "pending";
}

/** One finished request, as `createApp` reports it. */
export interface RequestEvent {
  route: string;
  method: string;
  status: number;
  durationMs: number;
  code?: string;
}

/**
 * The edge's metrics of one process: requests, what they stored, the feed's
 * readers, the verify workers.
 *
 * @example
 * ```ts
 * const metrics = new RequestMetrics();
 * metrics.record({ route: "/intents", method: "POST", status: 201, durationMs: 3 });
 * metrics.render(); // the lines `GET /metrics` serves of them
 * ```
 */
export class RequestMetrics {
  readonly #requests = new Counter({
    name: "intents_http_requests_total",
    otelName: "intents.http.server.requests",
    help: "HTTP requests by route, method and status.",
    unit: "{request}",
    labels: [ROUTE, METHOD, STATUS],
  });
  readonly #latency = new Histogram({
    name: "intents_http_request_duration_seconds",
    otelName: "intents.http.server.request.duration",
    help: "Time from request arrival to response, by route.",
    unit: "s",
    labels: [ROUTE],
  }, LATENCY_BUCKETS);
  readonly #accepted = new Counter({
    name: "intents_accepted_total",
    otelName: "intents.accepted",
    help: "Intents stored, by variant and signature kind.",
    unit: "{intent}",
    labels: [VARIANT, KIND],
  });
  readonly #rejections = new Counter({
    name: "intents_rejections_total",
    otelName: "intents.http.server.errors",
    help: "Error responses by route and error code.",
    unit: "{response}",
    labels: [ROUTE, { prometheus: "code", otel: "error.type" }],
  });
  readonly #pending = new Counter({
    name: "intents_pending_total",
    otelName: "intents.pending",
    help: "Intents stored pending approvals (202), by variant and signature kind.",
    unit: "{intent}",
    labels: [VARIANT, KIND],
  });
  readonly #approvals = new Counter({
    name: "intents_approvals_total",
    otelName: "intents.approvals",
    help:
      "Approvals stored, by outcome (approval_added, or accepted when it reached the threshold).",
    unit: "{approval}",
    labels: [OUTCOME],
  });
  readonly #signerRejections = new Counter({
    name: "intents_signer_rejections_total",
    otelName: "intents.signer_rejections",
    help: "Rejections stored, by outcome (rejection_added, or rejected when it ended the intent).",
    unit: "{rejection}",
    labels: [OUTCOME],
  });
  readonly #replays = new Counter({
    name: "intents_replays_total",
    otelName: "intents.replays",
    help:
      "Answers that replayed a submission, approval or rejection stored before (a retry), by route.",
    unit: "{response}",
    labels: [ROUTE],
  });
  readonly #limitRefusals = new Counter({
    name: "intents_limit_refusals_total",
    otelName: "intents.limit_refusals",
    help:
      "Requests refused by a limit: address, signer or auth (rate_limited), pending (too_many_pending).",
    unit: "{request}",
    labels: [{ prometheus: "limit", otel: "intents.limit" }],
  });
  readonly #eventsSent = new Counter({
    name: "intents_events_sent_total",
    otelName: "intents.events.sent",
    help: "Feed events sent to consumers, by form (pull or stream).",
    unit: "{event}",
    labels: [{ prometheus: "form", otel: "intents.feed.form" }],
  });
  readonly #streamsOpen = new Gauge({
    name: "intents_event_streams_open",
    otelName: "intents.events.streams",
    help: "Server-Sent Events streams of the feed open now.",
    unit: "{stream}",
    additive: true,
  });

  readonly #verifyWorkers = new Gauge({
    name: "intents_verify_workers",
    otelName: "intents.verify.workers",
    help:
      "Worker threads parsing and verifying submissions now (VERIFY_WORKERS, fewer if one could not start).",
    unit: "{thread}",
    additive: true,
  });

  /** Reads how many worker threads verify submissions from `threads` at each scrape or export. */
  verifyWorkersFrom(threads: () => number): void {
    this.#verifyWorkers.sampleFrom(threads);
  }

  /** Counts feed events sent. */
  eventsSent(form: "pull" | "stream", count: number): void {
    if (count > 0) this.#eventsSent.inc([form], count);
  }

  /** Counts a feed stream opened (+1) or closed (−1). */
  streamsOpen(change: 1 | -1): void {
    this.#streamsOpen.add([], change);
  }

  /** Records one finished request, and what its handler reported. */
  record(event: RequestEvent, outcome: RequestOutcome = {}): void {
    const method = isKnownMethod(event.method) ? event.method : "OTHER";
    this.#requests.inc([event.route, method, String(event.status)]);
    this.#latency.observe([event.route], event.durationMs / 1000);
    if (event.code !== undefined) this.#rejections.inc([event.route, event.code]);
    const { accepted, approved, rejected, replayed, limited } = outcome;
    if (accepted) {
      (accepted.pending ? this.#pending : this.#accepted).inc([accepted.variant, accepted.kind]);
    }
    if (approved) this.#approvals.inc([approved.accepted ? "accepted" : "approval_added"]);
    if (rejected) {
      this.#signerRejections.inc([rejected.rejected ? "rejected" : "rejection_added"]);
    }
    if (replayed) this.#replays.inc([event.route]);
    if (limited) this.#limitRefusals.inc([limited]);
  }

  /** The lines `GET /metrics` serves of them. */
  readonly render = (): string[] => [
    ...this.#requests.render(),
    ...this.#latency.render(),
    ...this.#accepted.render(),
    ...this.#pending.render(),
    ...this.#approvals.render(),
    ...this.#signerRejections.render(),
    ...this.#rejections.render(),
    ...this.#replays.render(),
    ...this.#limitRefusals.render(),
    ...this.#eventsSent.render(),
    ...this.#streamsOpen.render(),
    ...this.#verifyWorkers.render(),
  ];
}
