/**
 * Each route does what its one declaration (`src/http/routes/`, listed by `routes()`)
 * says, on the whole app: who may call it (docs/interface.md §7: 401 with
 * `WWW-Authenticate: Bearer` before anything else, the events and metrics
 * tokens only where declared), what it costs the client address (§12: a
 * token before anything else, the headers on every answer), the route its
 * requests are counted under, and the OpenAPI operation's `security`, 401
 * and rate-limit headers.
 */

import assert from "node:assert/strict";
import { ACCESS, type Route } from "../../src/http/route.ts";
import { routes } from "../../src/http/router.ts";
import { buildOpenApiDocument } from "../../src/http/openapi/document.ts";
import { withApp } from "../support/in_process.ts";
import { sampleValue, scrape } from "../support/metrics.ts";

const EVENTS_TOKEN = "routes-events-token-0123456";
const METRICS_TOKEN = "routes-metrics-token-0123456";
const ENV = { EVENTS_TOKEN, METRICS_TOKEN, RATE_LIMIT_AUTH_FAILURES: "0" };

/** A path of the route's template, each parameter an id nothing has. */
function pathOf(route: Route): string {
  return route.path.replace("{name}", "nothing.txt").replace(/\{[a-z_]+\}/g, "none");
}

/** A request of the route with `headers`: a JSON body where the method takes one. */
function requestOf(route: Route, headers: Record<string, string> = {}): RequestInit {
  const body = route.method === "GET" || route.method === "DELETE" ? undefined : "{}";
  const contentType: Record<string, string> = body ? { "content-type": "application/json" } : {};
  return { method: route.method, headers: { ...contentType, ...headers }, body };
}

const served = routes();

/** `METHOD path` of the routes that `pick` picks, sorted. */
function named(pick: (e: Route) => boolean): string[] {
  return served.filter(pick).map((e) => `${e.method} ${e.path}`).sort();
}

Deno.test("every route is declared once, with the access and cost of docs/interface.md §7 and §12", () => {
  const keys = served.map((e) => `${e.method} ${e.path}`);
  assert.equal(new Set(keys).size, keys.length);
  assert.deepEqual(named((e) => e.access === "public"), [
    "GET /",
    "GET /healthz",
    "GET /intents/{id}/approvals",
    "GET /log/key",
    "GET /openapi.json",
    "GET /policies/{id}",
    "GET /readyz",
    "GET /static/{name}",
    "GET /templates/{id}",
    "POST /intents",
    "POST /intents/dry-run",
    "POST /intents/{id}/approvals",
    "POST /intents/{id}/rejections",
  ]);
  assert.deepEqual(named((e) => e.access === "admin_or_events"), [
    "GET /events",
    "GET /log/checkpoint",
    "GET /log/proof",
    "GET /log/tile/{tile}",
  ]);
  // Behind a token, but public for some requests (docs/interface.md §14).
  assert.deepEqual(named((e) => e.publicWhen !== undefined), [
    "GET /log/checkpoint",
    "GET /log/proof",
  ]);
  assert.deepEqual(named((e) => e.access === "admin_or_metrics"), ["GET /metrics"]);
  assert.deepEqual(named((e) => e.cost === "work"), ["POST /intents", "POST /intents/dry-run"]);
  assert.deepEqual(named((e) => e.cost === "one"), [
    "GET /intents/{id}/approvals",
    "GET /log/key",
    "GET /policies/{id}",
    "GET /templates/{id}",
    "POST /intents/{id}/approvals",
    "POST /intents/{id}/rejections",
  ]);
});

Deno.test("who may call each route is as declared: 401 with WWW-Authenticate, each token where it counts", async () => {
  await withApp({ env: ENV }, async (h) => {
    const tokens = { admin: h.adminToken, events: EVENTS_TOKEN, metrics: METRICS_TOKEN };
    for (const route of served) {
      const name = `${route.method} ${route.path}`;
      const bare = await h.fetch(pathOf(route), requestOf(route));
      await bare.body?.cancel();
      if (route.access === "public") {
        assert.notEqual(bare.status, 401, name);
        continue;
      }
      assert.equal(bare.status, 401, name);
      assert.equal(bare.headers.get("www-authenticate"), "Bearer", name);
      for (const [which, token] of Object.entries(tokens)) {
        const accepted: boolean = which === "admin" || route.access === `admin_or_${which}`;
        const answer = await h.fetch(
          pathOf(route),
          requestOf(route, { authorization: `Bearer ${token}` }),
        );
        await answer.body?.cancel();
        assert.equal(answer.status !== 401, accepted, `${name} with the ${which} token`);
      }
    }
  });
});

Deno.test("what each route costs the client address is as declared: a token before anything else", async () => {
  // Bursts of two, the clock stopped: the third request of an address is refused.
  await withApp({ env: { RATE_LIMIT_PER_ADDRESS: "1" }, limitClock: () => 0 }, async (h) => {
    for (const [i, route] of served.entries()) {
      const name = `${route.method} ${route.path}`;
      const address = `192.0.2.${i + 1}`;
      const costs = (route.cost ?? "none") !== "none";
      for (let n = 1; n <= 3; n++) {
        // A text body: where a token is spent first, the third is 429 and never 415.
        const answer = await h.fetchFrom(address, pathOf(route), {
          ...requestOf(route),
          headers: { "content-type": "text/plain" },
        });
        await answer.body?.cancel();
        assert.equal(answer.headers.has("ratelimit-policy"), costs, `${name} #${n}`);
        if (costs) assert.equal(answer.status === 429, n === 3, `${name} #${n}: ${answer.status}`);
        else assert.notEqual(answer.status, 429, `${name} #${n}`);
      }
    }
  });
});

Deno.test("each route's requests are counted under its path template", async () => {
  await withApp({ env: ENV }, async (h) => {
    for (const route of served) {
      const answer = await h.fetch(pathOf(route), requestOf(route));
      await answer.body?.cancel();
    }
    const metrics = await scrape(h);
    for (const route of served) {
      const counted = sampleValue(metrics, "intents_http_requests_total", {
        route: route.path,
        method: route.method,
      });
      assert.ok(counted >= 1, `${route.method} ${route.path}`);
    }
  });
});

Deno.test("the OpenAPI operation of each route says who may call it and what it costs", () => {
  // deno-lint-ignore no-explicit-any
  const doc = buildOpenApiDocument(served, { webhooksAllowHttp: false }) as any;
  for (const route of served) {
    const name = `${route.method} ${route.path}`;
    const operation = doc.paths[route.path][route.method.toLowerCase()];
    const security = ACCESS[route.access].security;
    assert.deepEqual(operation.security, route.publicWhen ? [...security, {}] : security, name);
    assert.equal("401" in operation.responses, route.access !== "public", name);
    const limited = Object.values(operation.responses).every(
      // deno-lint-ignore no-explicit-any
      (response: any) => "RateLimit-Policy" in (response.headers ?? {}),
    );
    assert.equal(
      limited,
      (route.cost ?? "none") !== "none" || route.publicWhen !== undefined,
      name,
    );
  }
});
