/**
 * Guessing tokens is throttled (docs/interface.md §12): wrong or missing
 * bearer tokens spend a per-address budget of `RATE_LIMIT_AUTH_FAILURES` a
 * minute; once it is empty the address gets 429 on every route that needs
 * a token, before its token is compared, so a right guess is refused too; a
 * valid token spends nothing; 401s and those 429s carry the `"auth"`
 * policy's headers. The limits' clock stands still unless a test moves it.
 */

import assert from "node:assert/strict";
import { expectError } from "../support/fixtures.ts";
import { type AppHarness, withApp } from "../support/in_process.ts";
import { sampleValue, scrape } from "../support/metrics.ts";
import { routes } from "../../src/http/router.ts";

function headersOf(response: Response) {
  return {
    policy: response.headers.get("ratelimit-policy"),
    limit: response.headers.get("ratelimit"),
    retryAfter: response.headers.get("retry-after"),
  };
}

function getFrom(h: AppHarness, address: string, path: string, token?: string) {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  return h.fetchFrom(address, path, { headers });
}

Deno.test("wrong tokens spend the address's failure budget; then even the right token is 429", async () => {
  let clock = 0;
  const env = { RATE_LIMIT_AUTH_FAILURES: "3", METRICS_TOKEN: "metrics-token-0123456789" };
  await withApp({ env, limitClock: () => clock }, async (h) => {
    const from = "198.51.100.7";
    // A right token spends nothing and says nothing of the budget.
    for (let i = 0; i < 5; i++) {
      const ok = await getFrom(h, from, "/intents", h.adminToken);
      assert.equal(ok.status, 200);
      assert.deepEqual(headersOf(ok), { policy: null, limit: null, retryAfter: null });
      await ok.body?.cancel();
    }
    // Three wrong or missing tokens: 401s counting down (20 s a token at 3 a minute).
    const wrong = [
      await getFrom(h, from, "/intents", "wrong-token-0123456789"),
      await getFrom(h, from, "/config"),
      await getFrom(h, from, "/webhooks", "x"),
    ];
    for (const [i, response] of wrong.entries()) {
      assert.deepEqual(headersOf(response), {
        policy: '"auth";q=3;w=60',
        limit: `"auth";r=${2 - i};t=${20 * (i + 1)}`,
        retryAfter: null,
      });
      assert.equal(response.headers.get("www-authenticate"), "Bearer");
      await expectError(response, 401, "unauthorized");
    }
    // Empty: every route that needs a token is 429 before the token is compared.
    for (const path of ["/intents", "/events", "/metrics", "/webhooks", "/config"]) {
      const refused = await getFrom(h, from, path, h.adminToken);
      assert.deepEqual(headersOf(refused), {
        policy: '"auth";q=3;w=60',
        limit: '"auth";r=0;t=60',
        retryAfter: "20",
      }, path);
      await expectError(refused, 429, "rate_limited", { mentions: "wrong token" });
    }
    // Public routes and other addresses are not concerned.
    assert.equal((await getFrom(h, from, "/healthz")).status, 200);
    assert.equal((await getFrom(h, "198.51.100.8", "/intents", h.adminToken)).status, 200);
    // 20 s later one token has come back: the right token goes through.
    clock += 20_000;
    assert.equal((await getFrom(h, from, "/intents", h.adminToken)).status, 200);
    assert.equal(
      sampleValue(await scrape(h), "intents_limit_refusals_total", { limit: "auth" }),
      5,
    );
  });
});

Deno.test("an empty failure budget refuses every route that needs a token, as declared, the right token too", async () => {
  await withApp({ env: { RATE_LIMIT_AUTH_FAILURES: "1" }, limitClock: () => 0 }, async (h) => {
    const from = "198.51.100.9";
    await expectError(
      await getFrom(h, from, "/config", "wrong-token-0123456789"),
      401,
      "unauthorized",
    );
    const guarded = routes().filter((e) => e.access !== "public");
    assert.ok(guarded.length >= 15, `${guarded.length} routes need a token`);
    for (const { method, path } of guarded) {
      const body = method === "GET" || method === "DELETE" ? undefined : "{}";
      const response = await h.fetchFrom(from, path.replace(/\{[a-z_]+\}/g, "none"), {
        method,
        headers: {
          authorization: `Bearer ${h.adminToken}`,
          ...(body ? { "content-type": "application/json" } : {}),
        },
        body,
      });
      const name = `${method} ${path}`;
      assert.equal(response.headers.get("ratelimit-policy"), '"auth";q=1;w=60', name);
      await expectError(response, 429, "rate_limited", { mentions: "wrong token" });
    }
  });
});

Deno.test("an IPv6 guesser is counted by its /64", async () => {
  await withApp({ env: { RATE_LIMIT_AUTH_FAILURES: "1" }, limitClock: () => 0 }, async (h) => {
    await expectError(await getFrom(h, "2001:db8:1:2::1", "/intents", "nope"), 401, "unauthorized");
    await expectError(
      await getFrom(h, "2001:db8:1:2::ffff", "/intents", h.adminToken),
      429,
      "rate_limited",
    );
    assert.equal((await getFrom(h, "2001:db8:1:3::1", "/intents", h.adminToken)).status, 200);
  });
});

Deno.test("RATE_LIMIT_AUTH_FAILURES=0 counts nothing and says nothing", async () => {
  await withApp({ env: { RATE_LIMIT_AUTH_FAILURES: "0" } }, async (h) => {
    for (let i = 0; i < 30; i++) {
      const response = await getFrom(h, "198.51.100.9", "/intents", "wrong");
      assert.deepEqual(headersOf(response), { policy: null, limit: null, retryAfter: null });
      await expectError(response, 401, "unauthorized");
    }
    assert.equal((await getFrom(h, "198.51.100.9", "/intents", h.adminToken)).status, 200);
  });
});
