/**
 * `POST /intents/{id}/rejections` (docs/interface.md §10): a signer says no over the
 * rejection bytes (`intents:reject:` and the signed bytes), never over the
 * bytes of an approval or a submission; every refusal in the order of
 * approvals, each shown to come before the next by a request that would fail
 * both; a rejection recorded while the others can still reach the threshold,
 * the one that makes it unreachable ending the intent `rejected`; the record,
 * the view, the listing filter and the feed; each key deciding once, and the
 * same rejection again answered with the view. On a KV file and over KV
 * Connect.
 */

import assert from "node:assert/strict";
import { type Payload, signedBytes } from "../../client/mod.ts";
import { expectError } from "../support/fixtures.ts";
import type { Harness } from "../support/harness.ts";
import { type AppHarness, withApp } from "../support/in_process.ts";
import {
  addGoverned,
  authorizationOf,
  bodyOf,
  type DocKind,
  ed25519Signer,
  expectApproval,
  expectMediaTypeThenSize,
  getApprovals,
  getRecord,
  newSigned,
  passkeySigner,
  postApproval,
  postRejection,
  rejectChallengeOf,
  type Signer,
} from "../support/governed.ts";
import type { Json } from "../support/record.ts";
import { sampleValue, scrape } from "../support/metrics.ts";
import { storeTest } from "../support/stores.ts";

const WINDOW_S = 3600;

async function submit(h: Harness, signed: Payload, by: Signer, status = 202): Promise<Json> {
  const response = await h.submit(bodyOf(signed, await by.sign(signed)));
  const record = await response.json();
  assert.equal(response.status, status, JSON.stringify(record));
  return record;
}

/** The whole feed, read through the app. */
async function feedOf(h: Harness): Promise<(Json & { type: string; record: Json })[]> {
  const response = await h.fetch("/events?limit=1000", { headers: { authorization: h.auth } });
  assert.equal(response.status, 200);
  return (await response.json()).events;
}

/** Every KV key under `prefix` (due work, pending counts). */
async function keysUnder(h: AppHarness, prefix: Deno.KvKey): Promise<Deno.KvKey[]> {
  const found: Deno.KvKey[] = [];
  for await (const entry of h.kv.list({ prefix })) found.push(entry.key);
  return found;
}

storeTest("rejections: every refusal in order, each before the next", async (store, t) => {
  await withApp({ store }, async (h) => {
    const [e1, e2] = [ed25519Signer(), ed25519Signer()];
    const p = await passkeySigner();
    const outsider = ed25519Signer();
    // Threshold 2 of 3: one rejection leaves two that can still reach it.
    const authorization = authorizationOf([e1, e2, p], 2, { approval_window_s: WINDOW_S });
    const policy = await addGoverned(h, "policy", authorization);
    const plainPolicy = await h.newPolicy();
    const unknownId = crypto.randomUUID();
    const pending = newSigned("policy", policy) as Payload;
    await submit(h, pending, e1);

    await t.step("415 before 413 before 400 before 404", async () => {
      const good = JSON.stringify({ signature: await e2.reject(pending) });
      await expectMediaTypeThenSize(
        (id, body, type) => postRejection(h, id, body, type),
        [unknownId, pending.id],
        good,
      );
      for (const id of [unknownId, pending.id]) {
        for (const [body, code] of [["{", "invalid_json"], ["{}", "invalid_body"]]) {
          await expectError(await postRejection(h, id, body), 400, code);
        }
        const multisig = { signature: { Multisig: { pub_key: {}, signatures: [] } } };
        await expectError(await postRejection(h, id, multisig), 400, "invalid_body", {
          mentions: "signature.Multisig: a rejection is one Ed25519 or Passkey",
        });
      }
      const plain = newSigned("policy", plainPolicy) as Payload;
      assert.equal((await h.submit(bodyOf(plain, await outsider.sign(plain)))).status, 201);
      for (const id of [unknownId, plain.id, "x".repeat(129)]) {
        await expectError(await postRejection(h, id, good), 404, "not_found");
      }
    });

    await t.step("409 not_pending before invalid_signature and 403", async () => {
      const done = newSigned("policy", policy) as Payload;
      await submit(h, done, e1);
      await postApproval(h, done.id, { signature: await e2.sign(done) });
      await postApproval(h, done.id, { signature: await p.sign(done) });
      for (const signer of [outsider, e1, e2, p]) {
        for (const body of [await signer.reject(pending), await signer.reject(done)]) {
          const message = await expectError(
            await postRejection(h, done.id, { signature: body }),
            409,
            "not_pending",
          );
          assert.match(message, /accepted/);
        }
      }
    });

    await t.step("invalid_signature before 403 before already_approved", async () => {
      const other = newSigned("policy", policy) as Payload;
      for (const signer of [outsider, e1, e2]) {
        // A rejection of another intent, and an approval (not a rejection) of this one.
        for (const signature of [await signer.reject(other), await signer.sign(pending)]) {
          await expectError(
            await postRejection(h, pending.id, { signature }),
            400,
            "invalid_signature",
          );
        }
      }
      await expectError(
        await postRejection(h, pending.id, { signature: await outsider.reject(pending) }),
        403,
        "signer_not_authorized",
      );
      // e1 approved with its submission: it has decided.
      await expectError(
        await postRejection(h, pending.id, { signature: await e1.reject(pending) }),
        409,
        "already_approved",
      );
      // A rejection's signature never stands for an approval either.
      await expectError(
        await postApproval(h, pending.id, { signature: await e2.reject(pending) }),
        400,
        "invalid_signature",
      );
      // Nor for a submission: a fresh intent signed with rejection bytes does not verify.
      const fresh = newSigned("policy", policy) as Payload;
      const response = await h.submit(bodyOf(fresh, await e2.reject(fresh)));
      await expectError(response, 400, "invalid_signature");
    });

    await t.step("each key decides once; the same rejection again is the view", async () => {
      const first = await postRejection(h, pending.id, { signature: await e2.reject(pending) });
      assert.equal(first.status, 200);
      const view = await first.json();
      assert.equal(view.state, "pending");
      const again = await postRejection(h, pending.id, { signature: await e2.reject(pending) });
      assert.equal(again.status, 200);
      assert.deepEqual(await again.json(), view);
      const rejectBytes = new TextEncoder().encode(
        `intents:reject:${new TextDecoder().decode(signedBytes(pending))}`,
      );
      // Another rejection signature of the same key, and an approval after it: refused.
      const second = { signature: await e2.signBytesAgain(rejectBytes) };
      await expectError(await postRejection(h, pending.id, second), 409, "already_rejected");
      await expectError(
        await postApproval(h, pending.id, { signature: await e2.sign(pending) }),
        409,
        "already_rejected",
      );
    });
  });
});

storeTest(
  "a rejection is recorded while the others can reach the threshold; the one that cannot ends it",
  async (store) => {
    await withApp({ store }, async (h) => {
      const [e1, e2] = [ed25519Signer(), ed25519Signer()];
      const p = await passkeySigner({ compressed: true });
      // Weights 1, 1, 2 (4 in all), threshold 3: without e2 (1) three remain; without p too, one.
      const authorization = authorizationOf([e1, e2, p], 3, {
        weights: [1, 1, 2],
        approval_window_s: WINDOW_S,
      });
      const signers = authorization.signers as Record<string, number>;
      for (const kind of ["template", "policy"] as DocKind[]) {
        const doc = await addGoverned(h, kind, authorization);
        const start = (await feedOf(h)).length;
        const signed = newSigned(kind, doc) as Payload;
        const record = await submit(h, signed, e1);
        const view = await (await getApprovals(h, signed.id)).json();
        assert.equal(view.reject_challenge, await rejectChallengeOf(signed));
        assert.deepEqual(view.approval.rejections, []);

        const afterE2 = await postRejection(h, signed.id, { signature: await e2.reject(signed) });
        assert.equal(afterE2.status, 200);
        const pendingView = await afterE2.json();
        assert.equal(pendingView.state, "pending");
        const expected = {
          threshold: 3,
          signers,
          approvals: [{ key: e1.key, kind: "Ed25519" }],
          rejections: [{ key: e2.key, kind: "Ed25519" }],
          windowS: WINDOW_S,
          receivedAt: record.received_at as string,
        };
        expectApproval(pendingView.approval, expected);
        assert.deepEqual({ ...pendingView, approval: view.approval }, view);

        const afterP = await postRejection(h, signed.id, { signature: await p.reject(signed) });
        assert.equal(afterP.status, 200);
        assert.deepEqual(await afterP.json(), { id: signed.id, state: "rejected" });
        assert.deepEqual(await (await getApprovals(h, signed.id)).json(), {
          id: signed.id,
          state: "rejected",
        });

        const stored = await getRecord(h, signed.id);
        assert.equal(stored.state, "rejected");
        expected.rejections.push({ key: p.key, kind: "Passkey" });
        expectApproval(stored.approval, expected);
        assert.equal((stored.approval as Json).weight, 1);
        assert.deepEqual(stored.authorship, record.authorship);

        // The feed: stored pending, one rejection recorded, one that ended it; each record as
        // it stood after its event.
        const life = (await feedOf(h)).slice(start)
          .filter((e) => e.record.id === signed.id);
        assert.deepEqual(
          life.map((e) => [e.type, e.record.state]),
          [
            ["intent.pending", "pending"],
            ["intent.rejection_added", "pending"],
            ["intent.rejected", "rejected"],
          ],
        );
        assert.deepEqual(life[2].record, stored);
        assert.equal(
          (life[1].record.approval as Json & { rejections: Json[] }).rejections.length,
          1,
        );

        // A final state: no approval, no rejection counts any more; a repeat is answered.
        await expectError(
          await postApproval(h, signed.id, { signature: await e2.sign(signed) }),
          409,
          "not_pending",
        );
        await expectError(
          await postRejection(h, signed.id, { signature: await e1.reject(signed) }),
          409,
          "not_pending",
        );
        const repeat = await postRejection(h, signed.id, { signature: await p.reject(signed) });
        assert.equal(repeat.status, 200);
        assert.deepEqual(await repeat.json(), { id: signed.id, state: "rejected" });
      }

      // Its expiry is no longer due, and nobody's pending count holds it.
      assert.deepEqual(await keysUnder(h, ["due"]), []);
      assert.deepEqual(await keysUnder(h, ["pending_by_signer"]), []);
      // The metrics count each rejection by what it did, and the repeat apart.
      const samples = await scrape(h);
      const outcome = (name: string) =>
        sampleValue(samples, "intents_signer_rejections_total", { outcome: name });
      assert.equal(outcome("rejection_added"), 2);
      assert.equal(outcome("rejected"), 2);
      const route = "/intents/{id}/rejections";
      assert.equal(sampleValue(samples, "intents_replays_total", { route }), 2);
    });
  },
);

Deno.test("GET /intents?state=rejected lists the rejected intents, and only they", async () => {
  await withApp({}, async (h) => {
    const [a, b] = [ed25519Signer(), ed25519Signer()];
    const policy = await addGoverned(h, "policy", authorizationOf([a, b], 2));
    const rejected = newSigned("policy", policy) as Payload;
    const waiting = newSigned("policy", policy) as Payload;
    await submit(h, rejected, a);
    await submit(h, waiting, a);
    const answer = await postRejection(h, rejected.id, { signature: await b.reject(rejected) });
    assert.deepEqual(await answer.json(), { id: rejected.id, state: "rejected" });
    const list = async (state: string) => {
      const response = await h.fetch(`/intents?state=${state}`, {
        headers: { authorization: h.auth },
      });
      assert.equal(response.status, 200);
      return ((await response.json()).items as Json[]).map((r) => [r.id, r.state]);
    };
    assert.deepEqual(await list("rejected"), [[rejected.id, "rejected"]]);
    assert.deepEqual(await list("pending"), [[waiting.id, "pending"]]);
    assert.deepEqual(await list("accepted"), []);
    const bad = await h.fetch("/intents?state=refused", { headers: { authorization: h.auth } });
    await expectError(bad, 400, "invalid_body", {
      mentions: "pending, accepted, expired or rejected",
    });
  });
});
