/**
 * `MAX_PENDING_PER_SIGNER` (docs/interface.md §12): under a governed document at most
 * that many intents submitted by one key are pending at once; one more that
 * would be pending is 429 `too_many_pending` with `Retry-After`, after the id
 * check (409, or the replay) and the document's checks, and the id is not
 * taken. Every key that signed a submission counts; accepted intents never
 * count; the count falls when a pending intent is accepted, rejected or
 * expires. On a KV file and over KV Connect.
 */

import assert from "node:assert/strict";
import { pendingCountOf } from "../support/layouts.ts";
import { multisigSignature, type Payload } from "../../client/mod.ts";
import { expireIntent } from "../../src/domain/approve.ts";
import { expectError } from "../support/fixtures.ts";
import type { Harness } from "../support/harness.ts";
import { type AppHarness, withApp } from "../support/in_process.ts";
import {
  addGoverned,
  authorizationOf,
  bodyOf,
  ed25519Signer,
  expectIdFree,
  newSigned,
  postApproval,
  postRejection,
  type Signer,
} from "../support/governed.ts";
import { sampleValue, scrape } from "../support/metrics.ts";
import { storeTest } from "../support/stores.ts";
import { sleep } from "../support/time.ts";

/** Submits a fresh intent under `doc` signed by `by`; the response. */
async function submitBy(
  h: Harness,
  doc: string,
  by: Signer | Signer[],
  signers?: Record<string, number>,
  threshold?: number,
) {
  const signed = newSigned("policy", doc) as Payload;
  const all = [by].flat();
  const signature = all.length === 1 ? await all[0].sign(signed) : multisigSignature({
    signers: signers!,
    threshold: threshold!,
    signatures: await Promise.all(all.map((s) => s.sign(signed))),
  });
  const body = bodyOf(signed, signature);
  return { signed, body, response: await h.submit(body) };
}

/** The stored count of `key` under policy `doc`. */
/** A key's pending count under a policy as stored (in either write layout), or null when none is. */
function countOf(h: AppHarness, doc: string, key: string): Promise<number | null> {
  return pendingCountOf(h.kv, "policy", doc, key);
}

storeTest(
  "one key has at most MAX_PENDING_PER_SIGNER intents pending under a document",
  async (store, t) => {
    await withApp({ store, env: { MAX_PENDING_PER_SIGNER: "2" } }, async (h) => {
      const [a, b, c, d] = [ed25519Signer(), ed25519Signer(), ed25519Signer(), ed25519Signer()];
      const authorization = authorizationOf([a, b, c, d], 3);
      const signers = authorization.signers as Record<string, number>;
      const doc = await addGoverned(h, "policy", authorization);
      const other = await addGoverned(h, "policy", authorizationOf([a, b, c, d], 3));
      const stored: Payload[] = [];

      await t.step("two pending, then 429 with Retry-After; the id stays free", async () => {
        for (let i = 0; i < 2; i++) {
          const { signed, response } = await submitBy(h, doc, a);
          assert.equal(response.status, 202);
          await response.body?.cancel();
          stored.push(signed);
        }
        assert.equal(await countOf(h, doc, a.key), 2);
        const { signed, body, response } = await submitBy(h, doc, a);
        assert.equal(response.headers.get("retry-after"), "60");
        await expectError(response, 429, "too_many_pending", { mentions: "2 intents pending" });
        await expectIdFree(h, signed.id);
        assert.equal(await countOf(h, doc, a.key), 2);
        // Sent again, still refused; by another key, the id is there to take.
        await expectError(await h.submit(body), 429, "too_many_pending");
        const byB = await h.submit(bodyOf(signed, await b.sign(signed)));
        assert.equal(byB.status, 202);
        await byB.body?.cancel();
      });

      await t.step("the id check and the document's checks come before it", async () => {
        // A's own pending intent sent again is a replay; another body for its id is 409.
        const replay = await h.submit(bodyOf(stored[0], await a.sign(stored[0])));
        assert.equal(replay.status, 200);
        await replay.body?.cancel();
        const clash = bodyOf(stored[0], await c.sign(stored[0]));
        await expectError(await h.submit(clash), 409, "intent_exists");
        // A Multisig whose descriptor is not the document's quorum: 400 before the 429.
        const signed = newSigned("policy", doc) as Payload;
        const mismatch = multisigSignature({
          signers,
          threshold: 2,
          signatures: [await a.sign(signed)],
        });
        await expectError(await h.submit(bodyOf(signed, mismatch)), 400, "quorum_mismatch");
      });

      await t.step("accepted intents and other documents do not count", async () => {
        // A and two others reach the threshold: accepted at once, A's count unchanged.
        const { response } = await submitBy(h, doc, [a, b, c], signers, 3);
        assert.equal(response.status, 201);
        await response.body?.cancel();
        assert.equal(await countOf(h, doc, a.key), 2);
        const elsewhere = await submitBy(h, other, a);
        assert.equal(elsewhere.response.status, 202);
        await elsewhere.response.body?.cancel();
      });

      await t.step("every key of a submission counts", async () => {
        // A Multisig of C and D below the threshold: one pending intent for each of them.
        for (let i = 0; i < 2; i++) {
          const { response } = await submitBy(h, doc, [c, d], signers, 3);
          assert.equal(response.status, 202);
          await response.body?.cancel();
        }
        assert.equal(await countOf(h, doc, c.key), 2);
        assert.equal(await countOf(h, doc, d.key), 2);
        const alone = await submitBy(h, doc, d);
        await expectError(alone.response, 429, "too_many_pending");
      });

      await t.step("an acceptance, a rejection and an expiry each give a place back", async () => {
        // Accepted: B and C approve A's first intent.
        await postApproval(h, stored[0].id, { signature: await b.sign(stored[0]) });
        const accepted = await postApproval(h, stored[0].id, {
          signature: await c.sign(stored[0]),
        });
        assert.equal((await accepted.json()).state, "accepted");
        assert.equal(await countOf(h, doc, a.key), 1);
        const again = await submitBy(h, doc, a);
        assert.equal(again.response.status, 202);
        await again.response.body?.cancel();
        await expectError((await submitBy(h, doc, a)).response, 429, "too_many_pending");
        // Rejected: B and C say no to A's second; the two keys left cannot reach 3.
        for (const signer of [b, c]) {
          const answer = await postRejection(h, stored[1].id, {
            signature: await signer.reject(stored[1]),
          });
          await answer.body?.cancel();
        }
        const view = await (await h.fetch(`/intents/${stored[1].id}/approvals`)).json();
        assert.deepEqual(view, { id: stored[1].id, state: "rejected" });
        assert.equal(await countOf(h, doc, a.key), 1);
        const samples = await scrape(h);
        assert.ok(sampleValue(samples, "intents_limit_refusals_total", { limit: "pending" }) >= 4);
      });
    });
  },
);

storeTest(
  "an expiry gives the place back, and a count that reaches 0 is removed",
  async (store) => {
    await withApp({ store, env: { MAX_PENDING_PER_SIGNER: "1" } }, async (h) => {
      const [a, b] = [ed25519Signer(), ed25519Signer()];
      const doc = await addGoverned(
        h,
        "policy",
        authorizationOf([a, b], 2, { approval_window_s: 1 }),
      );
      const first = await submitBy(h, doc, a);
      assert.equal(first.response.status, 202);
      await first.response.body?.cancel();
      await expectError((await submitBy(h, doc, a)).response, 429, "too_many_pending");
      // Past the deadline the intent reads expired, but its place comes back when the expiry is
      // recorded (as the scheduler does it, within seconds).
      await sleep(1_100);
      const store = h.app.context.store;
      const outcome = await expireIntent({ store, now: () => new Date() }, first.signed.id);
      // The app's own scheduler may have recorded it first.
      assert.ok(outcome === "expired" || outcome === "unchanged", outcome);
      assert.equal((await store.getIntent(first.signed.id))?.state, "expired");
      assert.equal(await countOf(h, doc, a.key), null);
      const after = await submitBy(h, doc, a);
      assert.equal(after.response.status, 202);
      await after.response.body?.cancel();
    });
  },
);
