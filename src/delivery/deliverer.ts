/**
 * The deliverer of one endpoint, run by the process that holds its lease:
 * the endpoint's events, in the feed's order, one at a time (docs/interface.md
 * §11). Its turns, their checked writes and the acknowledgement not waited
 * for: docs/architecture.md, "Webhook delivery".
 *
 * One commit at most is left behind: an attempt waits for the write before
 * the last, so a change made elsewhere costs one repeated event at most. The
 * endpoint as such a write leaves it is known only as of the read it was
 * built on (the write may yet fail for a rotation that came after), so the
 * attempts that follow sign with secrets at most a second old, and the
 * endpoint is read again, after the write in flight, once that second has passed.
 * @module
 */

import { errorLine } from "../telemetry/error_line.ts";
import type { IntentEvent } from "../domain/intent.ts";
import { renderEvent } from "../domain/record.ts";
import { deliverOnce, type DeliveryResult, type SocketRules } from "../delivery/deliver.ts";
import { KeptConnection } from "../delivery/kept_connection.ts";
import {
  afterAttempt,
  attemptNumber,
  type AttemptRecord,
  secretsInForce,
  SIGNING_VIEW_MS,
  skipTo,
  wants,
} from "../webhooks/endpoint.ts";
import { deliveryHeaders } from "../webhooks/signing.ts";
import type { EndpointEntry, WebhookStore } from "../webhooks/store.ts";
import type { HeldLease } from "./lease.ts";
import type { WebhookMetrics } from "./metrics.ts";
import type { RecentEvents } from "./recent_events.ts";
import { abandonAttemptSpan, endAttemptSpan, startAttemptSpan } from "./attempt_span.ts";
import { delay } from "../timing.ts";

/**
 * How long an endpoint may stay moved past events not of its types without
 * recording it: an endpoint that receives few of the feed's types costs one
 * write in this time, not one per commit of the feed. Until then, the
 * endpoint as read (`after`, `lag`) stands behind by those events; after a
 * restart they are passed again. A caught-up deliverer also reads its
 * endpoint again this often, whatever else happens.
 */
export const RECORD_SKIPS_MS = 5_000;
/** After a storage failure, the next turn waits this long. */
const FAILURE_PAUSE_MS = 1_000;
/**
 * How long the endpoint as this deliverer last wrote it stands for the
 * endpoint without a read: admin changes made in this process notify at once,
 * those of other processes within a second (`CHANGES_POLL_MS`), and every
 * write is checked against the version anyway.
 */
const KNOWN_MS = 1_000;

/**
 * The endpoint as a turn sees it: its version may still be coming, from a
 * write in flight (null when that write failed).
 */
interface SeenEntry {
  endpoint: EndpointEntry["endpoint"];
  version: string | Promise<string | null>;
}

/** What a deliverer needs. */
export interface DelivererDeps {
  /** The endpoint, its lease and its attempts log. */
  webhooks: WebhookStore;
  /** The feed's events, read once for all the deliverers of the process. */
  events: Pick<RecentEvents, "read" | "waitForWanted">;
  /** `WEBHOOK_TIMEOUT_MS`. */
  timeoutMs: number;
  /** `WEBHOOKS_ALLOW_PRIVATE`. */
  allowPrivate: boolean;
  /** `WEBHOOKS_ALLOW_HTTP`: applied again at each attempt. */
  allowHttp: boolean;
  /** The process's socket rules (plain TCP to port 443 refused on Deno Deploy). */
  sockets: SocketRules;
  /** The delays before each retry. */
  schedule: readonly number[];
  /** Unix ms. */
  now: () => number;
  metrics?: WebhookMetrics;
  /** One line for operators: an endpoint disabled, a storage failure. */
  report: (line: string) => void;
}

/** Delivers to one endpoint while this process holds its lease. */
export class Deliverer {
  readonly #deps: DelivererDeps;
  readonly #lease: HeldLease;
  /** Ends a wait: the endpoint changed, or the deliverer stops. */
  #wake = new AbortController();
  /** Ends the attempt in flight. */
  readonly #abort = new AbortController();
  #stopping = false;
  /**
   * The endpoint as this deliverer's last write left it, and since when (Unix
   * ms) it is known to be so: the start of a write that landed, or else the
   * read (or landed write) the endpoint was built on.
   */
  #known: { entry: SeenEntry; at: number } | undefined;
  /** The connection to the endpoint kept between attempts. */
  readonly #connection = new KeptConnection();
  /** The last write, while in flight (settles to its version, or null: it failed). */
  #writing: Promise<string | null> | undefined;
  /** The write before the last, while still in flight: the next attempt waits for it. */
  #earlier: Promise<string | null> | undefined;
  /** Counts notifications: a write made across one does not stand for the endpoint. */
  #changes = 0;
  /**
   * How far the endpoint has moved past events not of its types without
   * recording it: the endpoint's version then, the position, and since when
   * (Unix ms) it has been ahead of what is stored.
   */
  #ahead: { entry: EndpointEntry; since: number } | undefined;
  /** The endpoint's position as last read: its lag is counted from it. */
  position = 0;
  /** Resolves when the deliverer has ended, its lease released or lost. */
  readonly done: Promise<void>;

  /** Starts delivering at once. */
  constructor(deps: DelivererDeps, lease: HeldLease) {
    this.#deps = deps;
    this.#lease = lease;
    this.done = this.#run();
  }

  /** The lease it holds. */
  get lease(): HeldLease {
    return this.#lease;
  }

  /** The endpoint changed: the next turn reads it again (a wait ends at once). */
  notify(): void {
    this.#changes++;
    this.#known = undefined;
    this.#wake.abort();
  }

  /** Starts no other attempt; one in flight ends and is recorded. */
  stop(): void {
    this.#stopping = true;
    this.#wake.abort();
  }

  /** Ends the attempt in flight too; it is not recorded, and its event is sent again later. */
  abort(): void {
    this.stop();
    this.#abort.abort();
  }

  async #run(): Promise<void> {
    try {
      await this.#loop();
    } finally {
      this.#connection.close();
      // An acknowledgement still committing lands before the lease can be released.
      await this.#writing;
      const ahead = this.#ahead;
      if (ahead && this.#lease.held) {
        await this.#move(ahead.entry, ahead.entry.endpoint).catch(() => {});
      }
    }
  }

  async #loop(): Promise<void> {
    const { webhooks } = this.#deps;
    while (!this.#stopping && this.#lease.held) {
      this.#wake = new AbortController();
      try {
        const known = this.#known;
        const fresh = known !== undefined && this.#deps.now() - known.at < KNOWN_MS;
        this.#known = undefined;
        const changes = this.#changes;
        // A read waits for the write in flight: it would otherwise see the endpoint before it.
        if (!fresh) await this.#writing;
        const seenAt = fresh ? known.at : this.#deps.now();
        const entry = fresh
          ? known.entry
          : this.#withAhead(await webhooks.getEndpoint(this.#lease.id));
        if (entry === null || entry.endpoint.status !== "active") {
          // Removed, paused or disabled: nothing to deliver until resumed (which writes due work).
          await this.#lease.release(false);
          return;
        }
        await this.#turn(entry, changes, seenAt);
      } catch (error) {
        const reason = errorLine(error);
        this.#deps.report(`intents: webhook ${this.#lease.id}: ${reason}`);
        await this.#pause(FAILURE_PAUSE_MS);
      }
    }
  }

  /** One turn on the endpoint as read at `seenAt` (after `changes` notifications). */
  async #turn(entry: SeenEntry, changes: number, seenAt: number): Promise<void> {
    const endpoint = entry.endpoint;
    this.position = endpoint.position;
    const now = this.#deps.now();
    if (endpoint.retryAt !== null && endpoint.retryAt > now) {
      await this.#pause(endpoint.retryAt - now);
      return;
    }
    const events = await this.#deps.events.read(endpoint.position);
    const next = events.find((event) => wants(endpoint, event.type));
    if (next) return await this.#attempt(entry, next, changes, seenAt);
    const before = await settled(entry);
    // A write in flight failed: the next turn reads what came first.
    if (before === null) return;
    const ahead = this.#ahead?.entry.version === before.version ? this.#ahead : undefined;
    const since = ahead?.since ?? now;
    let passed = events.at(-1)?.position ?? endpoint.position;
    if (events.length === 0) {
      // Caught up: wait for an event of its types (one follower of the feed for all deliverers).
      passed = await this.#deps.events.waitForWanted(
        endpoint.position,
        (type) => wants(endpoint, type),
        {
          timeoutMs: Math.max(0, since + RECORD_SKIPS_MS - now),
          signal: AbortSignal.any([this.#wake.signal, this.#lease.signal]),
        },
      );
      if (passed === endpoint.position && ahead === undefined) return;
    }
    const after = skipTo(endpoint, passed);
    const at = this.#deps.now();
    if (at - since >= RECORD_SKIPS_MS) {
      this.#wrote(after, await this.#move(before, after), changes, at);
      return;
    }
    this.#ahead = { entry: { endpoint: after, version: before.version }, since };
    // Known as read when the turn began: nothing was written to it since.
    if (changes === this.#changes) this.#known = { entry: this.#ahead.entry, at: seenAt };
  }

  /** Records the endpoint moved past events not of its types: its new version, or null. */
  #move(before: EndpointEntry, after: EndpointEntry["endpoint"]): Promise<string | null> {
    this.#ahead = undefined;
    return this.#lease.run((leaseVersion) =>
      this.#deps.webhooks.moveEndpoint({ before, leaseVersion }, after)
    );
  }

  /**
   * The endpoint as read, moved past the events this deliverer passed
   * without recording it, when nothing was written to it since.
   */
  #withAhead(entry: EndpointEntry | null): EndpointEntry | null {
    const ahead = this.#ahead;
    if (entry === null || ahead === undefined) return entry;
    if (ahead.entry.version !== entry.version) {
      this.#ahead = undefined;
      return entry;
    }
    return {
      endpoint: skipTo(entry.endpoint, ahead.entry.endpoint.position),
      version: entry.version,
    };
  }

  /**
   * Makes one attempt of `event` with the endpoint as known at `seenAt`, and
   * records it with what it makes of the endpoint.
   */
  async #attempt(
    entry: SeenEntry,
    event: IntentEvent,
    changes: number,
    seenAt: number,
  ): Promise<void> {
    // One acknowledgement at most commits behind the attempts: one that failed (a change came
    // first) is seen before another attempt goes out on the endpoint as it stood before.
    if (this.#earlier) {
      await this.#earlier;
      if (changes !== this.#changes) return;
    }
    const endpoint = entry.endpoint;
    const { timeoutMs, allowPrivate, allowHttp, sockets } = this.#deps;
    const started = this.#deps.now();
    if (started - seenAt >= SIGNING_VIEW_MS) {
      // Signed only with secrets known within the bound: a rotation elsewhere may retire some.
      this.#known = undefined;
      return;
    }
    const id = String(event.position);
    const body = renderEvent(event);
    const headers = await deliveryHeaders({
      secrets: secretsInForce(endpoint, started),
      id,
      timestampS: Math.floor(started / 1000),
      body,
    });
    const signal = AbortSignal.any([this.#abort.signal, this.#lease.signal]);
    const span = startAttemptSpan(endpoint.id, event);
    let result: DeliveryResult;
    try {
      result = await deliverOnce({
        url: endpoint.url,
        headers,
        body,
        timeoutMs,
        allowPrivate,
        allowHttp,
        sockets,
        connection: this.#connection,
        signal,
      });
    } catch (error) {
      // Stopped, or the lease lost: nothing to record; the holder after this one sends it again.
      if (signal.aborted) return abandonAttemptSpan(span);
      // A URL or header deliverOnce cannot send (the URL rule keeps such out): a failure all the same.
      this.#deps.report(`intents: webhook ${endpoint.id}: ${(error as Error).message}`);
      result = { status: null, error: "connection", durationMs: this.#deps.now() - started };
    }
    const record: AttemptRecord = {
      eventId: id,
      attempt: attemptNumber(endpoint, event.position),
      at: new Date(started).toISOString(),
      status: result.status,
      error: result.error,
      durationMs: result.durationMs,
    };
    const after = afterAttempt(endpoint, {
      position: event.position,
      record,
      retryAfterS: result.retryAfterS,
      endedAt: this.#deps.now(),
      schedule: this.#deps.schedule,
    });
    this.#deps.metrics?.attempt(result);
    endAttemptSpan(span, result, record, after);
    // The endpoint as written carries any position passed without a record.
    this.#ahead = undefined;
    const write = this.#lease.run(async (leaseVersion) => {
      const before = await settled(entry);
      return before &&
        await this.#deps.webhooks.recordAttempt({ before, leaseVersion }, after, record);
    });
    if (after.position === event.position && after.status === "active") {
      // Acknowledged: the next event goes out while this commits, on what was known at `seenAt`.
      this.#writeBehind(write, after, changes, seenAt);
      return;
    }
    const writeStarted = this.#deps.now();
    const version = await write;
    this.#wrote(after, version, changes, writeStarted);
    if (version !== null && after.status === "disabled") {
      this.#deps.report(
        `intents: webhook ${endpoint.id} disabled (${after.disabledReason}) after attempt ${record.attempt} of event ${id}`,
      );
    }
  }

  /**
   * Lets `write` commit while the next turn goes on with the endpoint as it
   * will leave it, known as of `seenAt`, when what it was built on was: the
   * write, not landed yet, shows nothing newer. When it fails, the endpoint
   * is read again at once.
   */
  #writeBehind(
    write: Promise<string | null>,
    after: SeenEntry["endpoint"],
    changes: number,
    seenAt: number,
  ): void {
    const landed = write.then((version) => version, (error) => {
      const reason = errorLine(error);
      this.#deps.report(`intents: webhook ${this.#lease.id}: ${reason}`);
      return null;
    }).then((version) => {
      if (this.#writing === landed) this.#writing = undefined;
      if (this.#earlier === landed) this.#earlier = undefined;
      if (version === null) {
        // As a change would: no write begun before now stands for the endpoint, so the
        // attempts already under way are not followed by more before the endpoint is read.
        this.#changes++;
        this.#known = undefined;
        this.#wake.abort();
      }
      return version;
    });
    this.#earlier = this.#writing;
    this.#writing = landed;
    if (changes !== this.#changes) return;
    this.#known = { entry: { endpoint: after, version: landed }, at: seenAt };
  }

  /**
   * Keeps the endpoint as written, when the write succeeded and no change was
   * notified since the turn began: the next turn needs no read.
   */
  #wrote(
    endpoint: EndpointEntry["endpoint"],
    version: string | null,
    changes: number,
    startedAt: number,
  ): void {
    if (version === null || changes !== this.#changes) return;
    // Its commit was checked against the version read: the endpoint was so when it started.
    this.#known = { entry: { endpoint, version }, at: startedAt };
  }

  /** Waits `ms`, or less when woken or the lease goes. */
  #pause(ms: number): Promise<void> {
    return delay(ms, AbortSignal.any([this.#wake.signal, this.#lease.signal]));
  }
}

/** The entry with its version, once a write in flight has given it one; null when it failed. */
async function settled(entry: SeenEntry): Promise<EndpointEntry | null> {
  const version = await entry.version;
  return version === null ? null : { endpoint: entry.endpoint, version };
}
