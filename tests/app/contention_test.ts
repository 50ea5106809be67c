/**
 * Writes that keep losing to other writers of the same data (docs/interface.md
 * §8): tried again with jittered backoff up to a bound, then answered 503
 * `unavailable` with `Retry-After`, never left waiting without end and never a
 * 500; nothing of the refused write is stored.
 */

import assert from "node:assert/strict";
import type { Payload } from "../../client/mod.ts";
import { expectError } from "../support/fixtures.ts";
import { withApp } from "../support/in_process.ts";
import {
  addGoverned,
  authorizationOf,
  bodyOf,
  ed25519Signer,
  expectIdFree,
  newSigned,
} from "../support/governed.ts";

Deno.test("a pending submission whose document's counts keep changing under it: 503 with Retry-After", async () => {
  await withApp({}, async (h) => {
    const [a, b] = [ed25519Signer(), ed25519Signer()];
    const policy = await addGoverned(h, "policy", authorizationOf([a, b], 2));
    // Another writer rewrites the policy's pending counts without pause, as many processes
    // storing pending intents under it at once would.
    let hammering = true;
    const counts = ["pending_counts", "policy", policy];
    const hammer = Promise.all(Array.from({ length: 8 }, async () => {
      while (hammering) await h.kv.set(counts, new TextEncoder().encode("{}"));
    }));
    try {
      const signed = newSigned("policy", policy) as Payload;
      const started = performance.now();
      const response = await h.submit(bodyOf(signed, await a.sign(signed)));
      const ms = performance.now() - started;
      assert.equal(response.status, 503);
      assert.equal(response.headers.get("retry-after"), "1");
      await expectError(response, 503, "unavailable", { mentions: "try again" });
      assert.ok(ms < 10_000, `answered after ${ms} ms`);
      hammering = false;
      await hammer;
      await expectIdFree(h, signed.id);
      // Once the other writer stops, the same submission is stored.
      const again = await h.submit(bodyOf(signed, await a.sign(signed)));
      assert.equal(again.status, 202);
      await again.body?.cancel();
    } finally {
      hammering = false;
      await hammer;
    }
  });
});
