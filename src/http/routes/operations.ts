/**
 * Operations endpoints: `GET /healthz` (liveness and storage) and
 * `GET /metrics` (admin token or `METRICS_TOKEN`).
 * @module
 */

import { requireBearer } from "../auth.ts";
import type { RequestContext } from "../context.ts";
import { METRICS_CONTENT_TYPE } from "../metrics.ts";
import { json } from "../respond.ts";

/** How long `/healthz` waits for the storage to answer. */
const HEALTH_TIMEOUT_MS = 2000;

/** `GET /healthz`: 200 while the storage answers a read, else 503 `unavailable`. */
export async function healthz(_request: Request, { app }: RequestContext): Promise<Response> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let ok = false;
  try {
    ok = await Promise.race([
      app.store.ping(),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), HEALTH_TIMEOUT_MS);
      }),
    ]);
  } catch {
    ok = false;
  } finally {
    clearTimeout(timer);
  }
  return ok
    ? json(200, { status: "ok" })
    : json(503, { message: "storage is not answering", code: "unavailable" });
}

/** `GET /metrics`: 401 unless the request carries the admin token or `METRICS_TOKEN`. */
export function metrics(request: Request, { app }: RequestContext): Response {
  requireBearer(request, [app.settings.adminToken, app.settings.metricsToken]);
  return new Response(app.metrics.render(), {
    status: 200,
    headers: {
      "content-type": METRICS_CONTENT_TYPE,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    },
  });
}
