/**
 * Prometheus metrics of one server process, fed by the app's request observer
 * and by the event feed, served at `GET /metrics` (admin token or
 * `METRICS_TOKEN`) in the text exposition format 0.0.4.
 *
 * Counts are per process: with several processes, Prometheus scrapes each and
 * sums. Series are keyed by their label values joined with NUL, which no
 * label value holds. Every label value comes from a bounded set (route names, known
 * methods, status codes, error codes, variants, signature kinds), so a client
 * cannot grow the registry.
 * @module
 */

/** Upper bounds of the latency histogram, in seconds. */
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

const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]);

/** What `POST /intents` stored. */
export interface AcceptedIntent {
  variant: "A" | "B";
  kind: string;
  /** Stored pending approvals (a 202). */
  pending: boolean;
}

/** One finished request, as `createApp` reports it. */
export interface RequestEvent {
  route: string;
  method: string;
  status: number;
  durationMs: number;
  code?: string;
  /** Set when `POST /intents` stored an intent (accepted, or pending approvals). */
  accepted?: AcceptedIntent;
  /** Set when `POST /intents/{id}/approvals` stored an approval. */
  approved?: { accepted: boolean };
  /** Set when `POST /intents/{id}/rejections` stored a rejection. */
  rejected?: { rejected: boolean };
  /** Set when the answer replayed what was stored before (a retry). */
  replayed?: boolean;
  /** Set when a limit refused the request: the client address, a key, or the pending intents. */
  limited?: "address" | "signer" | "auth" | "pending";
}

/** Called once per finished request. */
export type RequestObserver = (event: RequestEvent) => void;

/** Escapes a label value (exposition format: backslash, quote, newline). */
function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

export function labelText(names: readonly string[], values: readonly string[]): string {
  if (names.length === 0) return "";
  return `{${names.map((n, i) => `${n}="${escapeLabel(values[i])}"`).join(",")}}`;
}

/** Renders a float the way Prometheus parses it. */
export function number(value: number): string {
  if (value === Infinity) return "+Inf";
  return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(15)));
}

/** A counter by labels. */
export class Counter {
  readonly #values = new Map<string, { labels: string[]; value: number }>();
  constructor(readonly name: string, readonly help: string, readonly labelNames: string[]) {}

  inc(labels: string[], by = 1): void {
    const key = labels.join("\u0000");
    const entry = this.#values.get(key);
    if (entry) entry.value += by;
    else this.#values.set(key, { labels, value: by });
  }

  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const { labels, value } of this.#values.values()) {
      lines.push(`${this.name}${labelText(this.labelNames, labels)} ${number(value)}`);
    }
    return lines;
  }
}

class Gauge {
  #value = 0;
  constructor(readonly name: string, readonly help: string) {}

  add(by: number): void {
    this.#value += by;
  }

  set(value: number): void {
    this.#value = value;
  }

  render(): string[] {
    return [
      `# HELP ${this.name} ${this.help}`,
      `# TYPE ${this.name} gauge`,
      `${this.name} ${number(this.#value)}`,
    ];
  }
}

/** A histogram by labels. */
export class Histogram {
  readonly #series = new Map<string, { labels: string[]; counts: number[]; sum: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: string[],
    readonly buckets: readonly number[],
  ) {}

  observe(labels: string[], value: number): void {
    const key = labels.join("\u0000");
    let series = this.#series.get(key);
    if (!series) {
      series = { labels, counts: new Array(this.buckets.length + 1).fill(0), sum: 0 };
      this.#series.set(key, series);
    }
    let i = this.buckets.findIndex((bound) => value <= bound);
    if (i === -1) i = this.buckets.length;
    series.counts[i]++;
    series.sum += value;
  }

  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    const names = [...this.labelNames, "le"];
    for (const { labels, counts, sum } of this.#series.values()) {
      // Buckets are cumulative in the exposition format.
      let cumulative = 0;
      const bounds = [...this.buckets, Infinity];
      bounds.forEach((bound, i) => {
        cumulative += counts[i];
        const text = labelText(names, [...labels, number(bound)]);
        lines.push(`${this.name}_bucket${text} ${cumulative}`);
      });
      const text = labelText(this.labelNames, labels);
      lines.push(`${this.name}_sum${text} ${number(sum)}`);
      lines.push(`${this.name}_count${text} ${cumulative}`);
    }
    return lines;
  }
}

/**
 * The metrics of one process.
 *
 * @example
 * ```ts
 * const metrics = new MetricsRegistry();
 * // handed to `createApp({ store, settings, metrics })`, which counts every request in it
 * metrics.render(); // the Prometheus text that `GET /metrics` serves
 * ```
 */
export class MetricsRegistry {
  readonly #requests = new Counter(
    "intents_http_requests_total",
    "HTTP requests by route, method and status.",
    ["route", "method", "status"],
  );
  readonly #latency = new Histogram(
    "intents_http_request_duration_seconds",
    "Time from request arrival to response, by route.",
    ["route"],
    LATENCY_BUCKETS,
  );
  readonly #accepted = new Counter(
    "intents_accepted_total",
    "Intents stored, by variant and signature kind.",
    ["variant", "kind"],
  );
  readonly #rejections = new Counter(
    "intents_rejections_total",
    "Error responses by route and error code.",
    ["route", "code"],
  );

  readonly #pending = new Counter(
    "intents_pending_total",
    "Intents stored pending approvals (202), by variant and signature kind.",
    ["variant", "kind"],
  );
  readonly #approvals = new Counter(
    "intents_approvals_total",
    "Approvals stored, by outcome (approval_added, or accepted when it reached the threshold).",
    ["outcome"],
  );
  readonly #signerRejections = new Counter(
    "intents_signer_rejections_total",
    "Rejections stored, by outcome (rejection_added, or rejected when it ended the intent).",
    ["outcome"],
  );
  readonly #replays = new Counter(
    "intents_replays_total",
    "Answers that replayed a submission, approval or rejection stored before (a retry), by route.",
    ["route"],
  );
  readonly #limitRefusals = new Counter(
    "intents_limit_refusals_total",
    "Requests refused by a limit: address, signer or auth (rate_limited), pending (too_many_pending).",
    ["limit"],
  );
  readonly #expired = new Counter(
    "intents_expired_total",
    "Pending intents whose expiry this process recorded.",
    [],
  );
  readonly #eventsSent = new Counter(
    "intents_events_sent_total",
    "Feed events sent to consumers, by form (pull or stream).",
    ["form"],
  );
  readonly #streamsOpen = new Gauge(
    "intents_event_streams_open",
    "Server-Sent Events streams of the feed open now.",
  );

  /** Metrics kept elsewhere (webhook deliveries), rendered after these. */
  readonly #more: (() => string[])[] = [];

  readonly #verifyWorkers = new Gauge(
    "intents_verify_workers",
    "Worker threads parsing and verifying submissions now (VERIFY_WORKERS, fewer if one could not start).",
  );

  /** Renders `render()`'s lines after the registry's own, in every scrape. */
  include(render: () => string[]): void {
    this.#more.push(render);
  }

  /** Sets how many worker threads verify submissions now. */
  verifyWorkers(threads: number): void {
    this.#verifyWorkers.set(threads);
  }

  /** Counts a pending intent whose expiry this process recorded. */
  intentExpired(): void {
    this.#expired.inc([]);
  }

  /** Counts feed events sent. */
  eventsSent(form: "pull" | "stream", count: number): void {
    if (count > 0) this.#eventsSent.inc([form], count);
  }

  /** Counts a feed stream opened (+1) or closed (−1). */
  streamsOpen(change: 1 | -1): void {
    this.#streamsOpen.add(change);
  }

  /** The observer to pass to `createApp`; records one finished request. */
  readonly observe: RequestObserver = (event) => this.record(event);

  /** Records one finished request. */
  record(event: RequestEvent): void {
    const method = KNOWN_METHODS.has(event.method) ? event.method : "OTHER";
    this.#requests.inc([event.route, method, String(event.status)]);
    this.#latency.observe([event.route], event.durationMs / 1000);
    if (event.code !== undefined) this.#rejections.inc([event.route, event.code]);
    if (event.accepted) {
      const { variant, kind, pending } = event.accepted;
      (pending ? this.#pending : this.#accepted).inc([variant, kind]);
    }
    if (event.approved) {
      this.#approvals.inc([event.approved.accepted ? "accepted" : "approval_added"]);
    }
    if (event.rejected) {
      this.#signerRejections.inc([event.rejected.rejected ? "rejected" : "rejection_added"]);
    }
    if (event.replayed) this.#replays.inc([event.route]);
    if (event.limited) this.#limitRefusals.inc([event.limited]);
  }

  /** The registry in the Prometheus text format. */
  render(): string {
    return [
      ...this.#requests.render(),
      ...this.#latency.render(),
      ...this.#accepted.render(),
      ...this.#pending.render(),
      ...this.#approvals.render(),
      ...this.#signerRejections.render(),
      ...this.#expired.render(),
      ...this.#rejections.render(),
      ...this.#replays.render(),
      ...this.#limitRefusals.render(),
      ...this.#eventsSent.render(),
      ...this.#streamsOpen.render(),
      ...this.#verifyWorkers.render(),
      ...this.#more.flatMap((render) => render()),
    ].join("\n") + "\n";
  }
}

/** Media type of the text exposition format. */
export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
