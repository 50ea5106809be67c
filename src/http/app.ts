/**
 * The HTTP edge: routing, the one error mapper, request ids and the log line.
 * Built by one `createApp(deps)` call so tests run the whole stack in-process.
 * @module
 */

import { ServiceError } from "../errors.ts";
import type { Settings } from "../settings.ts";
import { type IntentWriter, StorageUnavailableError, type Store } from "../domain/store.ts";
import type { LogReader } from "../domain/log.ts";
import type { AppContext, RequestContext } from "./context.ts";
import { errorResponse, HttpError } from "./respond.ts";
import type { RequestLogLine } from "./request_log.ts";
import { Router, routes } from "./router.ts";
import { admit } from "./limits.ts";
import { isKnownMethod, RequestMetrics } from "./metrics.ts";
import { MetricsRegistry } from "../telemetry/registry.ts";
import type { WebhookStore } from "../webhooks/store.ts";
import type { DeadlineSweeper } from "./deadlines.ts";
import { type VerifyContext, verifyContext } from "../domain/authorship.ts";
import { inlineVerifier, type Verifier } from "../workers/verify_pool.ts";
import { StaticFiles } from "./static_files.ts";
import { RequestLimits } from "./rate_limit.ts";
import { activeSpan } from "../telemetry/tracing.ts";

/** What `createApp` needs. */
export interface AppDeps {
  store: Store;
  /** Webhook endpoints, their leases and attempts, on the same storage. */
  webhooks: WebhookStore;
  settings: Settings;
  /** How accepted intents reach the store: concurrent ones grouped (`createWriter`). */
  writer: IntentWriter;
  /** Defaults to the system clock. */
  now?: () => Date;
  /** The rate limits' monotonic clock in milliseconds; defaults to `performance.now`. */
  limitClock?: () => number;
  /** Defaults to one JSON line on stdout. */
  log?: (line: RequestLogLine) => void;
  /** What `GET /metrics` serves, the app's own series first; defaults to those alone. */
  metrics?: MetricsRegistry;
  /** Shared body-read deadlines (the server's); defaults to a timer per read. */
  deadlines?: DeadlineSweeper;
  /** Aborted when the server stops, ending long-polls and event streams; defaults to never. */
  stopping?: AbortSignal;
  /**
   * Builds where `POST /intents` bodies are parsed and verified (e.g. a
   * `VerifyPool`) from the serving thread's verify context; defaults to the
   * calling thread. Its owner closes it.
   */
  verifier?: (ctx: VerifyContext) => Verifier;
  /** The verifiable log (docs/interface.md §14); without it, `/log` answers 404. */
  tlog?: LogReader;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** An error and the chain of its causes (`cause`), for the log. */
function describeCause(error: unknown): string {
  const parts: string[] = [];
  for (let e = error, depth = 0; e !== undefined && depth < 4; depth++) {
    parts.push(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
    e = e instanceof Error ? e.cause : undefined;
  }
  return parts.join("; cause: ");
}

/** The running app: a fetch handler, and what its handlers are given. */
export interface App {
  /**
   * Answers a request; `info` gives its peer, the client or a reverse proxy
   * (without it, every request counts as one client).
   */
  handler: (
    request: Request,
    info?: Pick<Deno.ServeHandlerInfo, "remoteAddr">,
  ) => Promise<Response>;
  context: AppContext;
}

/**
 * Builds the app from its dependencies (`src/service.ts` builds them as the
 * server runs). The caches it reads through (the serving thread's decoded
 * keys, the page's files) are its own.
 *
 * @example
 * ```ts
 * import { KvStore } from "../storage/kv_store.ts";
 * import { createWriter } from "../storage/group_commit.ts";
 * import { readSettings } from "../settings.ts";
 *
 * const kv = await Deno.openKv(":memory:");
 * const store = new KvStore(kv);
 * const app = createApp({
 *   store,
 *   webhooks: store.webhooks,
 *   writer: createWriter(store, { batchMax: 1 }),
 *   settings: readSettings({}),
 *   log: () => {},
 * });
 * const response = await app.handler(new Request("http://localhost/healthz"));
 * response.status; // 200
 * kv.close();
 * ```
 */
export function createApp(deps: AppDeps): App {
  const { store } = deps;
  const metrics = new RequestMetrics();
  const registry = deps.metrics ?? new MetricsRegistry();
  registry.include(metrics.render);
  // The serving thread's: a verify worker builds its own from the same policy.
  const serving = verifyContext({
    rpIds: deps.settings.passkeyRpIds,
    origins: deps.settings.passkeyOrigins,
    requireUserVerification: deps.settings.passkeyRequireUv,
  });
  const context: AppContext = {
    settings: deps.settings,
    store,
    webhooks: deps.webhooks,
    writer: deps.writer,
    verifyContext: serving,
    verifier: (deps.verifier ?? inlineVerifier)(serving),
    staticFiles: new StaticFiles(),
    now: deps.now ?? (() => new Date()),
    metrics,
    registry,
    stopping: deps.stopping ?? new AbortController().signal,
    deadlines: deps.deadlines,
    limits: new RequestLimits(deps.settings.limits, deps.limitClock),
    tlog: deps.tlog,
  };
  metrics.verifyWorkersFrom(() => context.verifier.threads);
  const router = new Router(routes());
  const log = deps.log ?? ((line) => console.log(JSON.stringify(line)));

  const handler: App["handler"] = async (request, info) => {
    const started = performance.now();
    const given = request.headers.get("x-request-id");
    const requestId = given && REQUEST_ID.test(given) ? given : crypto.randomUUID();
    const path = new URL(request.url).pathname;
    // The request's server span (Deno.serve's, when telemetry is on): docs/interface.md §13.
    const span = activeSpan();
    let response: Response;
    let template = "unmatched";
    let cause: unknown;
    let code: string | undefined;
    let ctx: RequestContext | undefined;
    try {
      const found = router.find(request.method, path);
      if (found === null) throw new ServiceError("not_found", "no such resource");
      template = found.path;
      // The template, never the path: spans (and the runtime's metrics) group by it. A method
      // the client made up is not a span name: `HTTP`, as OpenTelemetry's conventions name it.
      const method = isKnownMethod(request.method) ? request.method : "HTTP";
      span?.setAttribute("http.route", template).updateName(`${method} ${template}`);
      ctx = { app: context, params: found.params, peer: info?.remoteAddr, headers: {} };
      const { route } = found;
      // Resolved to its template (for the log and metrics); answering is the 405.
      if (route === undefined) {
        throw new HttpError("method_not_allowed", `${request.method} is not allowed here`, {
          allow: found.allow,
        });
      }
      // Who may call it, and what it costs, before anything else (docs/interface.md §7, §12).
      admit(request, ctx, route);
      response = await route.handler(request, ctx);
    } catch (error) {
      if (error instanceof ServiceError) {
        response = errorResponse(error);
        code = error.code;
      } else if (error instanceof StorageUnavailableError) {
        // Retryable, a moment later or on another instance; the reason is the store's fixed
        // phrase, and the operator's log keeps the cause.
        cause = error;
        code = "unavailable";
        response = errorResponse(
          new HttpError(
            "unavailable",
            `the service cannot store this now (${error.message}); try again later`,
            { "retry-after": "1" },
          ),
        );
      } else {
        cause = error;
        code = "internal";
        // The bare 500 says nothing of the cause, which goes to the log.
        response = errorResponse(new ServiceError("internal", "internal error"));
      }
    }
    // The rate limits' headers go on every answer of their routes, refusals included.
    for (const [name, value] of Object.entries(ctx?.headers ?? {})) {
      response.headers.set(name, value);
    }
    if (request.method === "HEAD") {
      // Release what the body holds (an event stream's place among the open ones).
      response.body?.cancel().catch(() => {});
      response = new Response(null, { status: response.status, headers: response.headers });
    }
    response.headers.set("x-request-id", requestId);
    const durationMs = performance.now() - started;
    const line: RequestLogLine = {
      time: new Date().toISOString(),
      request_id: requestId,
      method: request.method,
      path,
      status: response.status,
      duration_ms: Math.round(durationMs * 1000) / 1000,
    };
    if (cause !== undefined) line.error = describeCause(cause);
    if (span) {
      const { traceId, spanId } = span.spanContext();
      line.trace_id = traceId;
      line.span_id = spanId;
    }
    log(line);
    const event = { route: template, method: request.method, status: response.status, code };
    metrics.record({ ...event, durationMs }, ctx);
    return response;
  };

  return { handler, context };
}
