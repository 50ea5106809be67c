/**
 * The rate limits through a real server (docs/interface.md §12): the peer address
 * `Deno.serve` reports reaches the limiter, `X-Forwarded-For` counts only
 * behind `TRUSTED_PROXIES`, and the defaults are on for a server started
 * without any limit setting, wrong bearer tokens included.
 */

import assert from "node:assert/strict";
import { withProcess } from "../support/process.ts";

/** `POST /intents` with a body that is not JSON (a 400 once let in), with `headers`. */
async function post(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}/intents`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: "{",
  });
  await response.body?.cancel();
  return response;
}

Deno.test("the defaults are on: a burst of 100 from one address, then 429", async () => {
  // Empty values are the defaults, as if the variables were not set.
  const env = { RATE_LIMIT_PER_ADDRESS: "", RATE_LIMIT_PER_SIGNER: "" };
  await withProcess({ env }, async (h) => {
    // 50 a second, bursts of 100: of 160 at once, 100 and what refilled meanwhile get in.
    const answers = await Promise.all(Array.from({ length: 160 }, () => post(h.url)));
    const allowed = answers.filter((a) => a.status === 400);
    const refused = answers.filter((a) => a.status === 429);
    assert.equal(allowed.length + refused.length, 160);
    assert.ok(allowed.length >= 100 && allowed.length < 140, `${allowed.length} let in`);
    for (const answer of answers) {
      assert.equal(answer.headers.get("ratelimit-policy"), '"address";q=100;w=2');
    }
    for (const answer of refused) assert.ok(Number(answer.headers.get("retry-after")) >= 1);
  });
});

Deno.test("the peer is the client, unless it is a trusted proxy naming one", async () => {
  const env = { RATE_LIMIT_PER_ADDRESS: "1" };
  await withProcess({ env }, async (h) => {
    // Not trusted: whatever X-Forwarded-For says, the peer (127.0.0.1) is one client.
    const statuses = [];
    for (let i = 0; i < 3; i++) {
      statuses.push((await post(h.url, { "x-forwarded-for": `203.0.113.${i}` })).status);
    }
    assert.deepEqual(statuses, [400, 400, 429]);
  });
  await withProcess({ env: { ...env, TRUSTED_PROXIES: "127.0.0.1" } }, async (h) => {
    // Trusted: each address it names is a client of its own; without one, the proxy is.
    for (let i = 0; i < 3; i++) {
      const response = await post(h.url, { "x-forwarded-for": `203.0.113.${i}` });
      assert.equal(response.status, 400);
      assert.equal(response.headers.get("ratelimit"), '"address";r=1;t=1');
    }
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await post(h.url)).status);
    assert.deepEqual(statuses, [400, 400, 429]);
  });
});

/** `GET /intents` with `token` as the bearer token, with `headers`. */
async function list(url: string, token: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}/intents`, {
    headers: { authorization: `Bearer ${token}`, ...headers },
  });
  await response.body?.cancel();
  return response.status;
}

Deno.test("20 wrong tokens a minute by default; then the right one is refused too, behind an untrusted proxy for everyone", async () => {
  const env = { RATE_LIMIT_AUTH_FAILURES: "" };
  await withProcess({ env }, async (h) => {
    const wrong = [];
    for (let i = 0; i < 21; i++) wrong.push(await list(h.url, `guess-${i}-0123456789abcdef`));
    assert.deepEqual(wrong, [...Array(20).fill(401), 429]);
    // Every client behind this address (here: every client, since nothing is a trusted proxy).
    assert.equal(await list(h.url, h.adminToken, { "x-forwarded-for": "203.0.113.7" }), 429);
  });
  await withProcess({ env: { ...env, TRUSTED_PROXIES: "127.0.0.1" } }, async (h) => {
    // Behind a trusted proxy only the guesser it names is locked out.
    const guesser = { "x-forwarded-for": "203.0.113.66" };
    for (let i = 0; i < 20; i++) {
      assert.equal(await list(h.url, `guess-${i}-0123456789`, guesser), 401);
    }
    assert.equal(await list(h.url, h.adminToken, guesser), 429);
    assert.equal(await list(h.url, h.adminToken, { "x-forwarded-for": "203.0.113.7" }), 200);
  });
});
