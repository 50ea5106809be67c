/**
 * The rate limits through a real server (docs/interface.md §12): the peer address
 * `Deno.serve` reports reaches the limiter, `X-Forwarded-For` counts only
 * behind `TRUSTED_PROXIES`, and the defaults are on for a server started
 * without any limit setting.
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
