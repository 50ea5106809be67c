/**
 * The rate limits of docs/interface.md §12, in process with the peer address given as
 * `Deno.serve` gives it: a bucket per client address on `POST /intents` and
 * the approval and rejection routes, checked before anything else, with
 * `RateLimit-Policy` and `RateLimit` on every answer and `Retry-After` on a
 * 429; who the client is (an IPv6 /64, an IPv4-mapped address, the walk of
 * `X-Forwarded-For` behind `TRUSTED_PROXIES`); a bucket per key, checked once
 * its signature verified and spent only by what is stored; the refusals in
 * the metrics.
 */

import assert from "node:assert/strict";
import { generateEd25519Key, signVariantA } from "../../client/mod.ts";
import { expectError, newPayload } from "../support/fixtures.ts";
import { type AppHarness, withApp } from "../support/in_process.ts";
import {
  addGoverned,
  authorizationOf,
  bodyOf,
  ed25519Signer,
  newSigned,
} from "../support/governed.ts";
import { sampleValue, scrape } from "../support/metrics.ts";
import type { Payload } from "../../client/mod.ts";

const json = { "content-type": "application/json" };

/** `POST /intents` with `body` from the peer `address`. */
function submitFrom(h: AppHarness, address: string, body: unknown, headers: HeadersInit = json) {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return h.fetchFrom(address, "/intents", { method: "POST", headers, body: text });
}

function limitHeaders(response: Response) {
  return {
    policy: response.headers.get("ratelimit-policy"),
    limit: response.headers.get("ratelimit"),
    retryAfter: response.headers.get("retry-after"),
  };
}

Deno.test("an address over its limit is 429 before anything else; every answer says what is left", async () => {
  // One request a second, bursts of two.
  await withApp({ env: { RATE_LIMIT_PER_ADDRESS: "1" }, limitClock: () => 0 }, async (h) => {
    const template = await h.newTemplate();
    const key = generateEd25519Key();
    const good = () => signVariantA(newPayload(template), key);
    const taken = good();
    assert.equal((await submitFrom(h, "192.0.2.200", taken)).status, 201);
    const decision = JSON.stringify({ signature: taken.signature });
    // Each kind of answer, from a fresh address: the headers are there, one request spent.
    const answers: [number, RequestInit & { path?: string }][] = [
      [201, { body: JSON.stringify(good()), headers: json }],
      [200, { body: JSON.stringify(taken), headers: json }],
      [409, {
        body: JSON.stringify(signVariantA(taken.payload, generateEd25519Key())),
        headers: json,
      }],
      [415, { body: "x", headers: { "content-type": "text/plain" } }],
      [400, { body: "{", headers: json }],
      [404, { path: "/intents/no-such-intent/approvals", body: decision, headers: json }],
      [404, { path: "/intents/no-such-intent/rejections", body: decision, headers: json }],
    ];
    let n = 0;
    for (const [status, { path = "/intents", ...init }] of answers) {
      const response = await h.fetchFrom(`192.0.2.${++n}`, path, { method: "POST", ...init });
      await response.body?.cancel();
      assert.equal(response.status, status, path);
      assert.deepEqual(limitHeaders(response), {
        policy: '"address";q=2;w=2',
        limit: '"address";r=1;t=1',
        retryAfter: null,
      }, `${status} ${path}`);
    }
    // Two let in, whatever they were; the third is refused before its content type is read.
    const from = "198.51.100.9";
    await (await submitFrom(h, from, "{")).body?.cancel();
    const second = await submitFrom(h, from, good());
    assert.equal(second.status, 201);
    assert.equal(limitHeaders(second).limit, '"address";r=0;t=2');
    for (const headers of [json, { "content-type": "text/plain" }]) {
      const refused = await submitFrom(h, from, good(), headers);
      assert.deepEqual(limitHeaders(refused), {
        policy: '"address";q=2;w=2',
        limit: '"address";r=0;t=2',
        retryAfter: "1",
      });
      await expectError(refused, 429, "rate_limited", { mentions: "retry after 1 s" });
    }
    // The four routes share the address's bucket, the approvals view included.
    const approval = await h.fetchFrom(from, "/intents/x/approvals", {
      method: "POST",
      headers: json,
      body: "{}",
    });
    await expectError(approval, 429, "rate_limited");
    const read = await h.fetchFrom(from, "/intents/x/approvals");
    assert.equal(limitHeaders(read).policy, '"address";q=2;w=2');
    await expectError(read, 429, "rate_limited");
    // Another address is its own client.
    assert.equal((await submitFrom(h, "198.51.100.10", good())).status, 201);
    const samples = await scrape(h);
    assert.equal(sampleValue(samples, "intents_limit_refusals_total", { limit: "address" }), 4);
  });
});

Deno.test("who a client is: an IPv6 /64, an IPv4-mapped address, X-Forwarded-For behind trusted proxies", async () => {
  const env = { RATE_LIMIT_PER_ADDRESS: "1", TRUSTED_PROXIES: "10.0.0.0/8, 2001:db8:ffff::1" };
  await withApp({ env, limitClock: () => 0 }, async (h) => {
    const spend = async (address: string, headers: Record<string, string> = {}) => {
      const response = await submitFrom(h, address, "{", { ...json, ...headers });
      await response.body?.cancel();
      return response.status;
    };
    // One /64: two addresses share a bucket; the next /64 has its own.
    assert.equal(await spend("2001:db8:1:2::1"), 400);
    assert.equal(await spend("2001:db8:1:2:ffff::9"), 400);
    assert.equal(await spend("2001:db8:1:2::1"), 429);
    assert.equal(await spend("2001:db8:1:3::1"), 400);
    // An IPv4-mapped address is its IPv4 address.
    assert.equal(await spend("::ffff:203.0.113.5"), 400);
    assert.equal(await spend("203.0.113.5"), 400);
    assert.equal(await spend("[::ffff:203.0.113.5]"), 429);
    // Behind a trusted proxy the client is the first entry from the right past trusted hops.
    const via = (xff: string) => ({ "x-forwarded-for": xff });
    assert.equal(await spend("10.1.1.1", via("203.0.113.77, 10.2.2.2")), 400);
    assert.equal(await spend("2001:db8:ffff::1", via("203.0.113.77:8080")), 400);
    // What the client wrote to the left of its address changes nothing.
    assert.equal(await spend("10.1.1.1", via("198.18.0.1, 203.0.113.77")), 429);
    // Junk where the client should be: the last trusted hop stands for it.
    assert.equal(await spend("10.3.3.3", via("junk, 10.4.4.4")), 400);
    assert.equal(await spend("10.3.3.3", via("unknown, 10.4.4.4")), 400);
    assert.equal(await spend("10.5.5.5", via("nonsense, 10.4.4.4")), 429);
    // A bracketed dotted quad is no form a proxy writes: the trusted peer stands for the client.
    assert.equal(await spend("2001:db8:ffff::1", via("[203.0.113.77]")), 400);
    assert.equal(await spend("2001:db8:ffff::2", via("203.0.113.77")), 400);
    // An untrusted peer's X-Forwarded-For is not read: the peer is the client.
    assert.equal(await spend("192.0.2.50", via("203.0.113.90")), 400);
    assert.equal(await spend("192.0.2.50", via("203.0.113.91")), 400);
    assert.equal(await spend("192.0.2.50", via("203.0.113.92")), 429);
  });
});

Deno.test("with both rates 0 nothing is limited and no header is sent", async () => {
  const env = { RATE_LIMIT_PER_ADDRESS: "0", RATE_LIMIT_PER_SIGNER: "0" };
  await withApp({ env }, async (h) => {
    const template = await h.newTemplate();
    const key = generateEd25519Key();
    for (let i = 0; i < 30; i++) {
      const response = await submitFrom(h, "192.0.2.1", signVariantA(newPayload(template), key));
      assert.equal(response.status, 201);
      assert.deepEqual(limitHeaders(response), { policy: null, limit: null, retryAfter: null });
      await response.body?.cancel();
    }
  });
});

Deno.test("a key over its limit is 429 once its signature verified; only what is stored spends", async () => {
  const env = { RATE_LIMIT_PER_ADDRESS: "1000", RATE_LIMIT_PER_SIGNER: "1" };
  await withApp({ env, limitClock: () => 0 }, async (h) => {
    const template = await h.newTemplate();
    const key = generateEd25519Key();
    const other = generateEd25519Key();
    const first = signVariantA(newPayload(template), key);
    assert.equal((await h.submit(first)).status, 201);
    // Replays of its body by anyone, forged signatures with its key and 409s spend nothing.
    for (let i = 0; i < 5; i++) {
      assert.equal((await h.submit(first)).status, 200);
      const forged = structuredClone(first);
      forged.payload.id = `forged-${i}`;
      await expectError(await h.submit(forged), 400, "invalid_signature");
      const clash = signVariantA({ ...first.payload, attrs: { fields: { i } } }, key);
      await expectError(await h.submit(clash), 409, "intent_exists");
    }
    assert.equal((await h.submit(signVariantA(newPayload(template), key))).status, 201);
    // Two stored: the bucket is empty. A valid body is refused, naming both policies.
    const refused = await h.submit(signVariantA(newPayload(template), key));
    const headers = limitHeaders(refused);
    assert.equal(headers.policy, '"address";q=2000;w=2, "signer";q=2;w=2');
    assert.match(headers.limit ?? "", /^"address";r=\d+;t=\d+, "signer";r=0;t=2$/);
    assert.ok(Number(headers.retryAfter) >= 1);
    await expectError(refused, 429, "rate_limited", { mentions: "signed by this key" });
    // After the template and the signature: a missing template and a forged signature are 400s.
    const forged = signVariantA(newPayload(template), key);
    forged.payload.id = "forged-late";
    await expectError(await h.submit(forged), 400, "invalid_signature");
    const missing = signVariantA(newPayload("NoSuchTemplate"), key);
    await expectError(await h.submit(missing), 400, "template_not_found");
    // Other keys have their own budgets.
    assert.equal((await h.submit(signVariantA(newPayload(template), other))).status, 201);
    const samples = await scrape(h);
    assert.equal(sampleValue(samples, "intents_limit_refusals_total", { limit: "signer" }), 1);
  });
});

Deno.test("approvals and rejections spend the key's budget; its 429 comes after the signature, before 403", async () => {
  await withApp({ env: { RATE_LIMIT_PER_SIGNER: "1" }, limitClock: () => 0 }, async (h) => {
    // Each intent has an author of its own: authors spend their budgets too.
    const authors = [ed25519Signer(), ed25519Signer(), ed25519Signer(), ed25519Signer()];
    const [approver, outsider, third] = [ed25519Signer(), ed25519Signer(), ed25519Signer()];
    // The approver decides under `policy` and `wide`; under `elsewhere` it is not a signer.
    const policy = await addGoverned(h, "policy", authorizationOf([...authors, approver], 2));
    const wide = await addGoverned(h, "policy", authorizationOf([...authors, approver, third], 6));
    const elsewhere = await addGoverned(h, "policy", authorizationOf([...authors, outsider], 2));
    let next = 0;
    const pendingUnder = async (doc: string) => {
      const signed = newSigned("policy", doc) as Payload;
      const response = await h.submit(bodyOf(signed, await authors[next++].sign(signed)));
      assert.equal(response.status, 202);
      return signed;
    };
    const decide = async (path: "approvals" | "rejections", signed: Payload, body: unknown) =>
      await h.fetch(`/intents/${signed.id}/${path}`, {
        method: "POST",
        headers: json,
        body: JSON.stringify(body),
      });
    // Two decisions spend the approver's two tokens: an approval and a rejection.
    const a1 = await pendingUnder(policy);
    const a2 = await pendingUnder(wide);
    assert.equal(
      (await decide("approvals", a1, { signature: await approver.sign(a1) })).status,
      200,
    );
    assert.equal(
      (await decide("rejections", a2, { signature: await approver.reject(a2) })).status,
      200,
    );
    // Repeats spend nothing, and are answered before the key's budget is looked at.
    const repeat = await decide("approvals", a1, { signature: await approver.sign(a1) });
    assert.deepEqual(await repeat.json(), { id: a1.id, state: "accepted" });
    const a3 = await pendingUnder(policy);
    // A signature that does not verify is 400 still; a valid one is 429.
    await expectError(
      await decide("approvals", a3, { signature: await approver.sign(a1) }),
      400,
      "invalid_signature",
    );
    const refused = await decide("rejections", a3, { signature: await approver.reject(a3) });
    assert.match(refused.headers.get("ratelimit-policy") ?? "", /"signer";q=2;w=2$/);
    await expectError(refused, 429, "rate_limited");
    // Where it is no signer, the 429 comes before the 403.
    const b1 = await pendingUnder(elsewhere);
    await expectError(
      await decide("approvals", b1, { signature: await approver.sign(b1) }),
      429,
      "rate_limited",
    );
    // Refused decisions stored nothing: the intent still waits.
    const view = await (await h.fetch(`/intents/${a3.id}/approvals`)).json();
    assert.equal(view.state, "pending");
    assert.deepEqual(view.approval.rejections, []);
  });
});
