/**
 * Operations routes: `GET /healthz` (liveness: the storage answers),
 * `GET /readyz` (readiness: the storage answers and takes writes),
 * `GET /metrics` and `GET /openapi.json`; and their OpenAPI operations.
 * @module
 */

import type { Settings } from "../../settings.ts";
import type { AppContext, RequestContext } from "../context.ts";
import { METRICS_CONTENT_TYPE } from "../../telemetry/instruments.ts";
import { API_HEADERS, json } from "../respond.ts";
import { within } from "../../timing.ts";
import type { Route } from "../route.ts";
import { ref } from "../openapi/components.ts";
import { buildOpenApiDocument } from "../openapi/document.ts";
import { errorResponse, jsonResponse, REQUEST_ID_HEADER } from "../openapi/responses.ts";

/** How long `/healthz` and `/readyz` wait for the storage to answer. */
const HEALTH_TIMEOUT_MS = 2000;
/** How long the outcome of one storage read answers the probes, however many come. */
const HEALTH_READ_MS = 1_000;
/** A failed commit attempt keeps the instance not ready while it is the latest and this recent. */
const READY_WINDOW_MS = 30_000;

/** A storage read the probes share: when it began (`performance.now()`), its outcome. */
interface HealthRead {
  at: number;
  answered: Promise<boolean>;
  settled: boolean;
}

/** The latest read of each app's storage. */
const READS = new WeakMap<AppContext, HealthRead>();

/**
 * Whether the storage answers: the latest read, while it began less than
 * {@link HEALTH_READ_MS} ago or is still under way (and not past
 * {@link HEALTH_TIMEOUT_MS}), else a new one, answered within {@link HEALTH_TIMEOUT_MS}.
 */
async function storageAnswers(app: AppContext): Promise<boolean> {
  const now = performance.now();
  let read = READS.get(app);
  if (
    read === undefined ||
    (now - read.at >= HEALTH_READ_MS && (read.settled || now - read.at >= HEALTH_TIMEOUT_MS))
  ) {
    const started: HealthRead = { at: now, answered: Promise.resolve(false), settled: false };
    started.answered = app.store.ping().catch(() => false).finally(() => {
      started.settled = true;
    });
    READS.set(app, read = started);
  }
  return await within(read.answered, HEALTH_TIMEOUT_MS) === true;
}

/** 200 `{status}` while the storage answers (see {@link storageAnswers}), else 503. */
async function probe(app: AppContext, status: "ok" | "ready"): Promise<Response> {
  return await storageAnswers(app)
    ? json(200, { status })
    : json(503, { message: "storage is not answering", code: "unavailable" });
}

/** `GET /healthz`: liveness, the storage answers a read. */
function healthz(_request: Request, { app }: RequestContext): Promise<Response> {
  return probe(app, "ok");
}

/**
 * `GET /readyz`: {@link healthz}, and the latest commit attempt of the last
 * {@link READY_WINDOW_MS}, if any, succeeded. The store remembers how its
 * latest commit went, so a probe never writes.
 */
async function readyz(_request: Request, { app }: RequestContext): Promise<Response> {
  const last = app.store.lastCommit();
  if (last && !last.ok && app.now().getTime() - last.at.getTime() < READY_WINDOW_MS) {
    const message = `the last commit failed: ${last.failure ?? "unexpected error"}`;
    return json(503, { message, code: "unavailable" });
  }
  return await probe(app, "ready");
}

/** `GET /metrics`: every series of the process, in the Prometheus text format. */
function metrics(_request: Request, { app }: RequestContext): Response {
  return new Response(app.registry.render(), {
    status: 200,
    headers: { ...API_HEADERS, "content-type": METRICS_CONTENT_TYPE },
  });
}

/** The probes and the metrics (docs/interface.md §7, §13). */
export const OPERATION_ROUTES: Route[] = [
  {
    method: "GET",
    path: "/healthz",
    access: "public",
    handler: healthz,
    operation: () => ({
      operationId: "health_get",
      summary: "Liveness and storage check (public)",
      description: "KV is read for /healthz and /readyz at most once a second per process: " +
        "the outcome of a read answers both for a second.",
      tags: ["operations"],
      responses: {
        "200": jsonResponse("KV answers.", ref("Health"), { example: { status: "ok" } }),
        "503": errorResponse("KV does not answer.", ["unavailable"]),
      },
    }),
  },
  {
    method: "GET",
    path: "/readyz",
    access: "public",
    handler: readyz,
    operation: () => ({
      operationId: "ready_get",
      summary: "Readiness: the storage answers and takes writes (public)",
      description: "200 while KV answers a read and the latest commit attempt of this " +
        "process in the last 30 seconds, if any, succeeded; else 503 with the reason in " +
        '`message` ("storage is not answering", "the last commit failed: storage full"). ' +
        "A probe never writes, and reads KV as /healthz does, at most once a second; a failed " +
        "commit is seen at once. Point a load balancer's readiness check here and its liveness " +
        "check at /healthz.",
      tags: ["operations"],
      responses: {
        "200": jsonResponse("Ready.", ref("Ready"), { example: { status: "ready" } }),
        "503": errorResponse(
          "KV does not answer, or the latest commit of the last 30 seconds failed.",
          ["unavailable"],
        ),
      },
    }),
  },
  {
    method: "GET",
    path: "/metrics",
    access: "admin_or_metrics",
    handler: metrics,
    operation: () => ({
      operationId: "metrics_get",
      summary: "Prometheus metrics of this process (admin or metrics token)",
      tags: ["operations"],
      responses: {
        "200": {
          description: "Prometheus text exposition format 0.0.4.",
          headers: { "X-Request-Id": REQUEST_ID_HEADER },
          content: { "text/plain": { schema: { type: "string" } } },
        },
      },
    }),
  },
];

/**
 * `GET /openapi.json`: the OpenAPI document of `served`. It follows the app's
 * settings (what the process accepts); it is built on the first request for
 * those settings and kept: they do not change.
 */
export function openApiRoute(served: readonly Route[]): Route {
  const texts = new WeakMap<Settings, string>();
  return {
    method: "GET",
    path: "/openapi.json",
    access: "public",
    handler: (_request, { app: { settings } }) => {
      let text = texts.get(settings);
      if (text === undefined) {
        text = JSON.stringify(buildOpenApiDocument(served, settings));
        texts.set(settings, text);
      }
      return json(200, text, { "cache-control": "public, max-age=300" });
    },
    operation: () => ({
      operationId: "openapi_get",
      summary: "This document (public)",
      tags: ["operations"],
      responses: {
        "200": jsonResponse("The OpenAPI 3.1 document.", { type: "object" }),
      },
    }),
  };
}
