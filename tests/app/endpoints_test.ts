/**
 * Each endpoint does what its one declaration (`src/http/endpoints.ts`)
 * says, on the whole app: who may call it (docs/interface.md §7: 401 with
 * `WWW-Authenticate: Bearer` before anything else, the events and metrics
 * tokens only where declared), what it costs the client address (§12: a
 * token before anything else, the headers on every answer), the route its
 * requests are counted under, and the OpenAPI operation's `security`, 401
 * and rate-limit headers.
 */

import assert from "node:assert/strict";
import { ACCESS, type Endpoint } from "../../src/http/endpoint.ts";
import { endpoints } from "../../src/http/endpoints.ts";
import { buildOpenApiDocument } from "../../src/http/openapi/document.ts";
import { withApp } from "../support/in_process.ts";
import { sampleValue, scrape } from "../support/metrics.ts";

const EVENTS_TOKEN = "endpoints-events-token-0123";
const METRICS_TOKEN = "endpoints-metrics-token-0123";
const ENV = { EVENTS_TOKEN, METRICS_TOKEN, RATE_LIMIT_AUTH_FAILURES: "0" };

/** A path of the endpoint's template, each parameter an id nothing has. */
function pathOf(endpoint: Endpoint): string {
  return endpoint.path.replace("{name}", "nothing.txt").replace(/\{[a-z_]+\}/g, "none");
}

/** A request of the endpoint with `headers`: a JSON body where the method takes one. */
function requestOf(endpoint: Endpoint, headers: Record<string, string> = {}): RequestInit {
  const body = endpoint.method === "GET" || endpoint.method === "DELETE" ? undefined : "{}";
  const contentType: Record<string, string> = body ? { "content-type": "application/json" } : {};
  return { method: endpoint.method, headers: { ...contentType, ...headers }, body };
}

const served = endpoints();

/** `METHOD path` of the endpoints that `pick` picks, sorted. */
function named(pick: (e: Endpoint) => boolean): string[] {
  return served.filter(pick).map((e) => `${e.method} ${e.path}`).sort();
}

Deno.test("every endpoint is declared once, with the access and cost of docs/interface.md §7 and §12", () => {
  const keys = served.map((e) => `${e.method} ${e.path}`);
  assert.equal(new Set(keys).size, keys.length);
  assert.deepEqual(named((e) => e.access === "public"), [
    "GET /",
    "GET /healthz",
    "GET /intents/{id}/approvals",
    "GET /openapi.json",
    "GET /policies/{id}",
    "GET /readyz",
    "GET /static/{name}",
    "GET /templates/{id}",
    "POST /intents",
    "POST /intents/{id}/approvals",
    "POST /intents/{id}/rejections",
  ]);
  assert.deepEqual(named((e) => e.access === "admin_or_events"), ["GET /events"]);
  assert.deepEqual(named((e) => e.access === "admin_or_metrics"), ["GET /metrics"]);
  assert.deepEqual(named((e) => e.cost === "work"), ["POST /intents"]);
  assert.deepEqual(named((e) => e.cost === "one"), [
    "GET /intents/{id}/approvals",
    "GET /policies/{id}",
    "GET /templates/{id}",
    "POST /intents/{id}/approvals",
    "POST /intents/{id}/rejections",
  ]);
});

Deno.test("who may call each endpoint is as declared: 401 with WWW-Authenticate, each token where it counts", async () => {
  await withApp({ env: ENV }, async (h) => {
    const tokens = { admin: h.adminToken, events: EVENTS_TOKEN, metrics: METRICS_TOKEN };
    for (const endpoint of served) {
      const name = `${endpoint.method} ${endpoint.path}`;
      const bare = await h.fetch(pathOf(endpoint), requestOf(endpoint));
      await bare.body?.cancel();
      if (endpoint.access === "public") {
        assert.notEqual(bare.status, 401, name);
        continue;
      }
      assert.equal(bare.status, 401, name);
      assert.equal(bare.headers.get("www-authenticate"), "Bearer", name);
      for (const [which, token] of Object.entries(tokens)) {
        const accepted: boolean = which === "admin" || endpoint.access === `admin_or_${which}`;
        const answer = await h.fetch(
          pathOf(endpoint),
          requestOf(endpoint, { authorization: `Bearer ${token}` }),
        );
        await answer.body?.cancel();
        assert.equal(answer.status !== 401, accepted, `${name} with the ${which} token`);
      }
    }
  });
});

Deno.test("what each endpoint costs the client address is as declared: a token before anything else", async () => {
  // Bursts of two: the third request of an address within the second is refused.
  await withApp({ env: { RATE_LIMIT_PER_ADDRESS: "1" } }, async (h) => {
    for (const [i, endpoint] of served.entries()) {
      const name = `${endpoint.method} ${endpoint.path}`;
      const address = `192.0.2.${i + 1}`;
      const costs = (endpoint.cost ?? "none") !== "none";
      for (let n = 1; n <= 3; n++) {
        // A text body: where a token is spent first, the third is 429 and never 415.
        const answer = await h.fetchFrom(address, pathOf(endpoint), {
          ...requestOf(endpoint),
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

Deno.test("each endpoint's requests are counted under its path template", async () => {
  await withApp({ env: ENV }, async (h) => {
    for (const endpoint of served) {
      const answer = await h.fetch(pathOf(endpoint), requestOf(endpoint));
      await answer.body?.cancel();
    }
    const metrics = await scrape(h);
    for (const endpoint of served) {
      const counted = sampleValue(metrics, "intents_http_requests_total", {
        route: endpoint.path,
        method: endpoint.method,
      });
      assert.ok(counted >= 1, `${endpoint.method} ${endpoint.path}`);
    }
  });
});

Deno.test("the OpenAPI operation of each endpoint says who may call it and what it costs", () => {
  // deno-lint-ignore no-explicit-any
  const doc = buildOpenApiDocument(served, { webhooksAllowHttp: false }) as any;
  for (const endpoint of served) {
    const name = `${endpoint.method} ${endpoint.path}`;
    const operation = doc.paths[endpoint.path][endpoint.method.toLowerCase()];
    assert.deepEqual(operation.security, ACCESS[endpoint.access].security, name);
    assert.equal("401" in operation.responses, endpoint.access !== "public", name);
    const limited = Object.values(operation.responses).every(
      // deno-lint-ignore no-explicit-any
      (response: any) => "RateLimit-Policy" in (response.headers ?? {}),
    );
    assert.equal(limited, (endpoint.cost ?? "none") !== "none", name);
  }
});
