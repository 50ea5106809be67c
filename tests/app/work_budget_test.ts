/**
 * An address's budget is spent by work (docs/interface.md §12): a
 * submission, approval or rejection spends max(1, signatures carried, public
 * keys named) tokens, one when it is let in and the rest once its body is
 * read; a 429 for the rest spends nothing more; work past the bucket's
 * capacity costs the whole bucket; the approvals view spends one; the
 * `RateLimit` headers say what is left. The limits' clock stands still
 * unless a test moves it.
 */

import assert from "node:assert/strict";
import {
  ed25519Signature,
  generateEd25519Key,
  multisigSignature,
  unsignedVariantB,
  variantABody,
} from "../../client/mod.ts";
import { expectError, keyText, newIntent, newPayload } from "../support/fixtures.ts";
import { type AppHarness, withApp } from "../support/in_process.ts";

const json = { "content-type": "application/json" };

/** What the `RateLimit` header says is left, and the `Retry-After`. */
function left(response: Response): { r: number; retryAfter: string | null } {
  const match = /^"address";r=(\d+);t=\d+$/.exec(response.headers.get("ratelimit") ?? "");
  assert.ok(match, `RateLimit: ${response.headers.get("ratelimit")}`);
  return { r: Number(match[1]), retryAfter: response.headers.get("retry-after") };
}

function submitFrom(h: AppHarness, address: string, body: unknown) {
  return h.fetchFrom(address, "/intents", {
    method: "POST",
    headers: json,
    body: JSON.stringify(body),
  });
}

/** A Multisig body under `template` naming `named` fresh keys, `signing` of them signing. */
function multisigBody(template: string, named: number, signing: number) {
  const payload = newPayload(template);
  const keys = Array.from({ length: named }, generateEd25519Key);
  return variantABody(
    payload,
    multisigSignature({
      signers: Object.fromEntries(keys.map((k) => [keyText(k), 1])),
      threshold: Math.max(1, signing),
      signatures: keys.slice(0, signing).map((k) => ed25519Signature(payload, k)),
    }),
  );
}

for (const workers of ["0", "1"]) {
  Deno.test(`a request spends the tokens of its work; a 429 for the rest spends nothing more (VERIFY_WORKERS=${workers})`, async () => {
    // 50 tokens a second, a bucket of 100.
    const env = { RATE_LIMIT_PER_ADDRESS: "50", VERIFY_WORKERS: workers };
    await withApp({ env, limitClock: () => 0 }, async (h) => {
      const template = await h.newTemplate();
      const from = "192.0.2.10";
      const spends: [string, unknown, number, number][] = [
        ["sixteen signatures", multisigBody(template, 16, 16), 201, 16],
        ["sixteen keys named, one signature", multisigBody(template, 16, 1), 201, 16],
        ["two keys named, two signatures", multisigBody(template, 2, 2), 201, 2],
        ["one signature", multisigBody(template, 1, 1), 201, 1],
        ["Unsigned (refused after its read)", unsignedVariantB(newIntent("NoSuchPolicy")), 400, 1],
        ["malformed", { payload: {} }, 400, 1],
      ];
      let before = 100;
      for (const [what, body, status, cost] of spends) {
        const response = await submitFrom(h, from, body);
        await response.body?.cancel();
        assert.equal(response.status, status, what);
        assert.equal(left(response).r, before - cost, what);
        before -= cost;
      }
      // The approvals view spends one, with the headers.
      const view = await h.fetchFrom(from, "/intents/no-such-intent/approvals");
      assert.equal(left(view).r, before - 1);
      await expectError(view, 404, "not_found");
    });
  });
}

Deno.test("a request whose further tokens are missing is 429 and spends only its first", async () => {
  // 10 tokens a second, a bucket of 20.
  let clock = 0;
  await withApp({ env: { RATE_LIMIT_PER_ADDRESS: "10" }, limitClock: () => clock }, async (h) => {
    const template = await h.newTemplate();
    const from = "192.0.2.20";
    const first = await submitFrom(h, from, multisigBody(template, 16, 16));
    assert.equal(first.status, 201);
    assert.equal(left(first).r, 4);
    // Sixteen: the first is there, the fifteen after it are not: 429, one token spent, and
    // Retry-After says when the rest will be (12 missing at 10 a second: 2 s).
    const refused = await submitFrom(h, from, multisigBody(template, 16, 16));
    assert.deepEqual(left(refused), { r: 3, retryAfter: "2" });
    await expectError(refused, 429, "rate_limited", { mentions: "from this address" });
    // What is left still pays for ordinary requests; 2 s later the bucket is full again.
    assert.equal((await submitFrom(h, from, multisigBody(template, 1, 1))).status, 201);
    clock += 2_000;
    const later = await submitFrom(h, from, multisigBody(template, 16, 16));
    assert.equal(later.status, 201);
    assert.equal(left(later).r, 4);
  });
});

Deno.test("work past the bucket's capacity costs the whole bucket", async () => {
  // 2 tokens a second, a bucket of 4: sixteen keys cost 4.
  await withApp({ env: { RATE_LIMIT_PER_ADDRESS: "2" }, limitClock: () => 0 }, async (h) => {
    const template = await h.newTemplate();
    const response = await submitFrom(h, "192.0.2.30", multisigBody(template, 16, 16));
    assert.equal(response.status, 201);
    assert.equal(left(response).r, 0);
    await expectError(
      await submitFrom(h, "192.0.2.30", multisigBody(template, 1, 1)),
      429,
      "rate_limited",
    );
  });
});
