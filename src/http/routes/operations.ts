/**
 * Operations endpoints: `GET /healthz` (liveness: the storage answers),
 * `GET /readyz` (readiness: the storage answers and takes writes) and
 * `GET /metrics`.
 * @module
 */

import type { AppContext, RequestContext } from "../context.ts";
import { METRICS_CONTENT_TYPE } from "../../telemetry/instruments.ts";
import { json } from "../respond.ts";

/** How long `/healthz` and `/readyz` wait for the storage to answer. */
const HEALTH_TIMEOUT_MS = 2000;
/** A failed commit attempt keeps the instance not ready while it is the latest and this recent. */
export const READY_WINDOW_MS = 30_000;

/** True when the storage answers a read within {@link HEALTH_TIMEOUT_MS}. */
async function storageAnswers(app: AppContext): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      app.store.ping(),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), HEALTH_TIMEOUT_MS);
      }),
    ]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

function unavailable(message: string): Response {
  return json(503, { message, code: "unavailable" });
}

/** `GET /healthz`: 200 while the storage answers a read, else 503 `unavailable`. */
export async function healthz(_request: Request, { app }: RequestContext): Promise<Response> {
  return await storageAnswers(app)
    ? json(200, { status: "ok" })
    : unavailable("storage is not answering");
}

/**
 * `GET /readyz`: 200 while the storage answers a read and the latest commit
 * attempt of the last {@link READY_WINDOW_MS}, if any, succeeded; else 503
 * `unavailable` with the reason. A probe never writes: the store remembers
 * how its latest commit went, so probes cost one read.
 */
export async function readyz(_request: Request, { app }: RequestContext): Promise<Response> {
  const last = app.store.lastCommit();
  if (last && !last.ok && app.now().getTime() - last.at.getTime() < READY_WINDOW_MS) {
    return unavailable(`the last commit failed: ${last.failure ?? "unexpected error"}`);
  }
  return await storageAnswers(app)
    ? json(200, { status: "ready" })
    : unavailable("storage is not answering");
}

/** `GET /metrics`: every series of the process, in the Prometheus text format. */
export function metrics(_request: Request, { app }: RequestContext): Response {
  return new Response(app.registry.render(), {
    status: 200,
    headers: {
      "content-type": METRICS_CONTENT_TYPE,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    },
  });
}
