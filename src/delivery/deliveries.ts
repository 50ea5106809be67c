/**
 * Webhook delivery in one process (docs/interface.md §11): the endpoints whose leases
 * it holds, each with its deliverer (`deliverer.ts`). How leases are taken, renewed,
 * taken over and released: docs/architecture.md, "Webhook delivery".
 * @module
 */

import { errorLine } from "../telemetry/error_line.ts";
import type { DueEntry, Store } from "../domain/store.ts";
import type { DueVerdict } from "../scheduler/due_work.ts";
import type { EndpointStatus } from "../webhooks/endpoint.ts";
import { SocketRules } from "../delivery/deliver.ts";
import type { WebhookStore } from "../webhooks/store.ts";
import { HeldLease } from "./lease.ts";
import type { WebhookMetrics } from "./metrics.ts";
import { RecentEvents } from "./recent_events.ts";
import { Deliverer } from "./deliverer.ts";
import { within } from "../timing.ts";

/** How long a lease lasts without renewal. */
export const LEASE_MS = 15_000;
/** How often a holder renews its leases: three chances before one runs out. */
export const RENEW_MS = 4_000;
/** How often a process looks for admin changes made by other processes. */
export const CHANGES_POLL_MS = 1_000;
/**
 * Deliverers' pages of events (count and bytes), and the window of recent
 * events they share: a few pages, so that deliverers a little apart still
 * read from memory.
 */
const EVENTS_PAGE = { limit: 100, maxBytes: 1 << 20, keepEvents: 1_000, keepBytes: 8 << 20 };
/** How often the endpoints-by-status metric is read again besides after changes. */
const STATUS_REFRESH_MS = 15_000;

/** Options of {@link WebhookDeliveries}. */
export interface DeliveriesOptions {
  /** The feed, which every deliverer follows. */
  store: Pick<Store, "readEvents" | "waitForEvents" | "onOwnEvents">;
  /** The endpoints, their leases and attempts logs. */
  webhooks: WebhookStore;
  settings: {
    webhookTimeoutMs: number;
    webhooksAllowPrivate: boolean;
    webhooksAllowHttp: boolean;
    webhookRetryScheduleMs: readonly number[];
    /** `DENO_DEPLOY=true`: plain TCP to port 443 is refused. */
    denoDeploy: boolean;
  };
  /** Unix ms; default `Date.now`. */
  now?: () => number;
  metrics?: WebhookMetrics;
  /** Asks the scheduler to look for due work now (an endpoint was created or resumed). */
  lookSoon?: () => void;
  /** Where operators' lines go; default standard error. */
  report?: (line: string) => void;
  /** This process's name in leases; default a random UUID. */
  holder?: string;
}

/** The webhook deliverers of one process. */
export class WebhookDeliveries {
  /** This process's name in the leases it holds. */
  readonly holder: string;
  readonly #options: DeliveriesOptions;
  readonly #now: () => number;
  readonly #report: (line: string) => void;
  readonly #deliverers = new Map<string, Deliverer>();
  readonly #events: RecentEvents;
  /** What this process knows of the runtime's socket rule, shared by its deliverers. */
  readonly #sockets: SocketRules;
  #timers: ReturnType<typeof setInterval>[] = [];
  #unsubscribe: (() => void) | undefined;
  #changes: bigint | undefined;
  #stopped = false;

  /** @param options the store, the settings, and what to report to. */
  constructor(options: DeliveriesOptions) {
    this.#options = options;
    this.holder = options.holder ?? crypto.randomUUID();
    this.#now = options.now ?? Date.now;
    this.#report = options.report ?? ((line) => console.error(line));
    this.#events = new RecentEvents(options.store, EVENTS_PAGE);
    this.#sockets = new SocketRules({ deploy: options.settings.denoDeploy });
  }

  /** The endpoints this process delivers to now. */
  get held(): string[] {
    return [...this.#deliverers.keys()];
  }

  /** Starts renewing, watching for changes and keeping the metrics. */
  start(): void {
    if (this.#timers.length > 0 || this.#stopped) return;
    const { webhooks } = this.#options;
    this.#unsubscribe = webhooks.onChange((id) => {
      this.#deliverers.get(id)?.notify();
      this.#options.lookSoon?.();
      void this.#countStatuses();
    });
    this.#timers = [
      setInterval(() => void this.#renewAll(), RENEW_MS),
      setInterval(() => void this.#pollChanges(), CHANGES_POLL_MS),
      setInterval(() => void this.#countStatuses(), STATUS_REFRESH_MS),
    ];
    void this.#countStatuses();
  }

  /**
   * The due-work handler of kind `webhook`: takes the endpoint's lease when
   * it is free (or expired) and the endpoint active, and starts delivering.
   */
  readonly claim = async (work: DueEntry): Promise<DueVerdict> => {
    if (this.#stopped) return "later";
    const held = this.#deliverers.get(work.id);
    if (held?.lease.held) {
      // Ours already (its renewals lagged): renewing moves its due work; if another process
      // took it meanwhile, that one's due work stands.
      await held.lease.renew(this.#now() + LEASE_MS);
      return "drop";
    }
    // A deliverer here whose lease ran out is ending: the lease is taken again below, as by
    // any process.
    const { webhooks } = this.#options;
    const entry = await webhooks.getEndpoint(work.id);
    if (entry === null || entry.endpoint.status !== "active") return "drop";
    const now = this.#now();
    const lease = await webhooks.takeLease({
      id: work.id,
      holder: this.holder,
      now,
      until: now + LEASE_MS,
      handled: { at: work.at },
    });
    // Another process holds it: the entry was left from before its take.
    if (lease === null) return "drop";
    if (this.#stopped) {
      await webhooks.releaseLease(lease, { wake: true, now: this.#now() });
      return "done";
    }
    this.#startDeliverer(new HeldLease(lease, webhooks, this.#now));
    return "done";
  };

  /**
   * Stops delivering: attempts in flight get `graceMs` to end and be
   * recorded, then are cut off (their events are sent again by the next
   * holder); every lease is released so that another process takes it over
   * at once.
   */
  async stop(options: { graceMs?: number } = {}): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    for (const timer of this.#timers) clearInterval(timer);
    this.#unsubscribe?.();
    const deliverers = [...this.#deliverers.values()];
    for (const deliverer of deliverers) deliverer.stop();
    const ended = Promise.all(deliverers.map((w) => w.done));
    await within(ended, options.graceMs ?? 1_000);
    for (const deliverer of deliverers) deliverer.abort();
    await ended;
    await Promise.all(deliverers.map((w) => w.lease.held ? w.lease.release(true) : undefined));
  }

  #startDeliverer(lease: HeldLease): void {
    const { settings, webhooks, metrics } = this.#options;
    const deliverer = new Deliverer({
      webhooks,
      events: this.#events,
      timeoutMs: settings.webhookTimeoutMs,
      allowPrivate: settings.webhooksAllowPrivate,
      allowHttp: settings.webhooksAllowHttp,
      sockets: this.#sockets,
      schedule: settings.webhookRetryScheduleMs,
      now: this.#now,
      metrics,
      report: this.#report,
    }, lease);
    this.#deliverers.set(lease.id, deliverer);
    this.#events.follow(true);
    metrics?.held(this.#deliverers.size);
    void deliverer.done.then(() => {
      if (this.#deliverers.get(lease.id) === deliverer) this.#deliverers.delete(lease.id);
      if (this.#deliverers.size === 0) this.#events.follow(false);
      metrics?.held(this.#deliverers.size);
      metrics?.lag(lease.id, null);
      // It ends when its endpoint stopped being active (disabled, paused, removed).
      void this.#countStatuses();
      // Ended while still holding it (not by stop()): let the scheduler decide again.
      if (!this.#stopped && lease.held) void lease.release(true);
    });
  }

  /** Renews every lease held; a lost one ends its deliverer. Also updates the lag metric. */
  async #renewAll(): Promise<void> {
    const until = this.#now() + LEASE_MS;
    await Promise.all([...this.#deliverers.values()].map(async (deliverer) => {
      try {
        await deliverer.lease.renew(until);
      } catch (error) {
        const reason = errorLine(error);
        this.#report(`intents: webhook ${deliverer.lease.id}: cannot renew its lease: ${reason}`);
      }
    }));
    const metrics = this.#options.metrics;
    if (metrics && this.#deliverers.size > 0) {
      try {
        const head = await this.#options.webhooks.feedHead();
        for (const [id, deliverer] of this.#deliverers) {
          metrics.lag(id, Math.max(0, head - deliverer.position));
        }
      } catch {
        // The lag stays as it was; the next renewal tries again.
      }
    }
  }

  /** Notices admin changes made by other processes: deliverers read their endpoints again. */
  async #pollChanges(): Promise<void> {
    let count: bigint;
    try {
      count = await this.#options.webhooks.changeCount();
    } catch {
      return;
    }
    if (this.#changes !== undefined && count !== this.#changes) {
      for (const deliverer of this.#deliverers.values()) deliverer.notify();
      this.#options.lookSoon?.();
      void this.#countStatuses();
    }
    this.#changes = count;
  }

  /** Reads the endpoints by status for the metrics. */
  async #countStatuses(): Promise<void> {
    const metrics = this.#options.metrics;
    if (!metrics || this.#stopped) return;
    try {
      const counts: Record<EndpointStatus, number> = { active: 0, paused: 0, disabled: 0 };
      for (const { endpoint } of await this.#options.webhooks.listEndpoints()) {
        counts[endpoint.status]++;
      }
      metrics.endpoints(counts);
    } catch {
      // Kept as last read; the next refresh tries again.
    }
  }
}
