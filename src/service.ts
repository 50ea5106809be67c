/**
 * The service composed: the store on an open Deno KV, the writer, the app,
 * webhook deliveries, the due-work scheduler and the metrics they all
 * report, wired once. `main.ts` serves it; the in-process tests call its app
 * directly (`tests/support/in_process.ts`), so both run the same wiring.
 * Opening KV, serving, signals and the cron job stay with `main.ts`.
 * @module
 */

import type { Settings } from "./settings.ts";
import type { VerifyContext } from "./domain/authorship.ts";
import { type App, createApp } from "./http/app.ts";
import { DeadlineSweeper } from "./http/deadlines.ts";
import type { RequestLogLine } from "./http/request_log.ts";
import { type InFlightRequests, type Stopped, stopServing } from "./http/shutdown.ts";
import { commitSpans } from "./storage/commit_spans.ts";
import { FeedMetrics } from "./storage/feed_metrics.ts";
import { KvStore } from "./storage/kv_store.ts";
import { createWriter } from "./storage/group_commit.ts";
import { dueWorkHandlers, DueWorkMetrics, DueWorkScheduler } from "./scheduler/due_work.ts";
import { WebhookDeliveries } from "./delivery/deliveries.ts";
import { VerifiableLog } from "./log/log.ts";
import { LogMetrics } from "./log/metrics.ts";
import { SocketRules } from "./delivery/deliver.ts";
import { witnessTransport } from "./delivery/witness_post.ts";
import { WebhookMetrics } from "./delivery/metrics.ts";
import { WEBHOOK_WORK } from "./webhooks/store.ts";
import { inlineVerifier, type Verifier, VerifyPool } from "./workers/verify_pool.ts";
import { MetricsRegistry } from "./telemetry/registry.ts";
import { flushSpans } from "./telemetry/tracing.ts";
import { within } from "./timing.ts";

/** What {@link composeService} needs. */
export interface ServiceOptions {
  /** The open KV the store keeps its data in; its opener closes it. */
  kv: Deno.Kv;
  settings: Settings;
  /** Defaults to the system clock. */
  now?: () => Date;
  /** The rate limits' monotonic clock in milliseconds; defaults to `performance.now`. */
  limitClock?: () => number;
  /** Each request's log line; defaults to one JSON line on stdout. */
  log?: (line: RequestLogLine) => void;
  /**
   * Worker threads that parse and verify submissions: `VERIFY_WORKERS`
   * unless given (0: the serving thread verifies).
   */
  verifyThreads?: number;
  /** Where operators' lines go (the verifier, deliveries, due work); default standard error. */
  report?: (line: string) => void;
}

/** The composed service. */
export interface Service {
  store: KvStore;
  app: App;
  /** Every series `GET /metrics` serves. */
  metrics: MetricsRegistry;
  deliveries: WebhookDeliveries;
  dueWork: DueWorkScheduler;
  /** The verifiable log: its key (`log.prepare()`, at boot), integration and checkpoints. */
  log: VerifiableLog;
  /** Starts the work done beside requests: webhook deliveries, due work and the log. */
  start(): void;
  /**
   * Stops in the order of docs/architecture.md (Shutdown) within
   * `SHUTDOWN_TIMEOUT_MS`; without `serving`, streams and long-polls end and
   * body reads are cut. The KV handles stay open: their opener closes them.
   */
  stop(serving?: {
    server: Pick<Deno.HttpServer, "shutdown">;
    inFlight: InFlightRequests;
  }): Promise<Stopped>;
}

/**
 * The pool of `threads` worker threads, or the serving thread itself where
 * there are none or this runtime has no workers.
 */
function startVerifier(
  threads: number,
  ctx: VerifyContext,
  options: { workCharged: boolean; report: (line: string) => void },
): Verifier {
  if (threads === 0) return inlineVerifier(ctx);
  try {
    const pool = new VerifyPool(threads, ctx, { workCharged: options.workCharged });
    options.report(`intents: submissions are parsed and verified on ${threads} worker thread(s)`);
    return pool;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    options.report(`intents: VERIFY_WORKERS: no worker threads here (${reason}); verifying inline`);
    return inlineVerifier(ctx);
  }
}

/**
 * Builds the service on an open KV. Nothing runs until {@link Service.start};
 * the store's fence is made before its first write, or first by `service.store.prepare()`.
 *
 * @example
 * ```ts
 * import { readSettings } from "./settings.ts";
 *
 * const kv = await Deno.openKv(":memory:");
 * const service = composeService({
 *   kv,
 *   settings: readSettings({}),
 *   log: () => {},
 * });
 * await service.store.prepare();
 * service.start();
 * const response = await service.app.handler(new Request("http://localhost/healthz"));
 * response.status; // 200
 * await service.stop();
 * kv.close();
 * ```
 */
export function composeService(options: ServiceOptions): Service {
  const { settings } = options;
  const now = options.now ?? (() => new Date());
  const report = options.report ?? ((line: string) => console.error(line));
  const metrics = new MetricsRegistry();
  const feedMetrics = new FeedMetrics();
  const store = new KvStore(options.kv, { now, metrics: feedMetrics });
  const writer = createWriter(store, {
    batchMax: settings.commitBatchMax,
    observer: commitSpans(),
  });
  // Body reads time out up to a tenth of the limit late (at most 250 ms).
  const deadlines = new DeadlineSweeper(Math.min(250, Math.max(10, settings.bodyTimeoutMs / 10)));
  const stopping = new AbortController();
  const threads = options.verifyThreads ?? settings.verifyWorkers;
  // The feed as a verifiable log: extended in the background by one process at a time.
  // Witnesses, when set, cosign its checkpoints; their calls go as webhook attempts go.
  const logMetrics = new LogMetrics();
  const witnesses = witnessTransport({
    timeoutMs: settings.log.witnesses.timeoutMs,
    allowInsecure: settings.log.witnesses.allowInsecure,
    sockets: new SocketRules({ deploy: settings.denoDeploy }),
  });
  const log = new VerifiableLog({
    kv: options.kv,
    store,
    settings: settings.log,
    report,
    witnessPost: witnesses.post,
    metrics: logMetrics,
  });
  const app = createApp({
    verifier: (ctx) =>
      startVerifier(threads, ctx, { workCharged: settings.limits.ratePerAddress > 0, report }),
    store,
    webhooks: store.webhooks,
    settings,
    writer,
    now,
    limitClock: options.limitClock,
    log: options.log,
    deadlines,
    stopping: stopping.signal,
    metrics,
    tlog: log.reader,
  });
  // Webhook endpoints whose leases this process takes are delivered to from here.
  const webhookMetrics = new WebhookMetrics();
  const deliveries = new WebhookDeliveries({
    store,
    webhooks: store.webhooks,
    settings,
    metrics: webhookMetrics,
    lookSoon: () => dueWork.lookSoon(),
    report,
  });
  // Due work (a pending intent's expiry, a webhook lease to take) is done by whichever process
  // finds it due.
  const dueWorkMetrics = new DueWorkMetrics();
  const dueWork: DueWorkScheduler = new DueWorkScheduler({
    store,
    now,
    handlers: {
      ...dueWorkHandlers({ store, now, expired: () => dueWorkMetrics.intentExpired() }),
      [WEBHOOK_WORK]: deliveries.claim,
    },
    report,
  });
  metrics.include(dueWorkMetrics.render);
  metrics.include(webhookMetrics.render);
  metrics.include(feedMetrics.render);
  metrics.include(logMetrics.render);

  const start = () => {
    store.start();
    deliveries.start();
    dueWork.start();
    log.start();
  };

  let stopped: Promise<Stopped> | undefined;
  const stop: Service["stop"] = (serving) =>
    stopped ??= (async () => {
      const timeoutMs = settings.shutdownTimeoutMs;
      const stopBy = performance.now() + timeoutMs;
      // No new look for due work; one under way ends with its commit (or is cut below).
      const dueWorkStopped = dueWork.stop();
      // No new integration step; one under way ends with its commit, and the lease is let go.
      const logStopped = log.stop();
      // Webhook attempts in flight get a moment to end; then the leases are released for others.
      const deliveriesStopped = deliveries.stop({ graceMs: Math.min(1_000, timeoutMs / 4) });
      let served: Stopped = { drained: true, unanswered: 0 };
      if (serving) {
        served = await stopServing({ ...serving, stopping, deadlines, timeoutMs });
      } else {
        stopping.abort();
        deadlines.cutAll();
      }
      deadlines.stop();
      await within(dueWorkStopped, 250);
      await within(logStopped, Math.max(250, stopBy - performance.now()));
      witnesses.close();
      await within(deliveriesStopped, stopBy - performance.now());
      // Events this process staged go into the feed before it stops: nothing waits on it.
      await store.drain(stopBy).catch(() => {});
      app.context.verifier.close();
      // Spans ended in the last batch go to the runtime, which exports them as it stops.
      flushSpans();
      return served;
    })();

  return { store, app, metrics, deliveries, dueWork, log, start, stop };
}
