/**
 * A retry is safe (docs/interface.md §4): the same signed submission sent again — the
 * same JSON value, whatever its white space or member order — is answered 200
 * with `Idempotent-Replayed: true`, `Location` and the record as
 * `GET /intents/{id}` renders it now, in both variants, with every signed
 * kind, in every state (pending, accepted, expired, rejected); an `Unsigned`
 * body and any other body for a taken id stay 409; the checks before the id
 * still come first. On a KV file and over KV Connect.
 */

import assert from "node:assert/strict";
import {
  ed25519Signature,
  type Intent,
  multisigSignature,
  type Payload,
  signVariantA,
  signVariantB,
  unsignedVariantB,
  variantABody,
  variantBBody,
} from "../../client/mod.ts";
import { expectError, keyText, newIntent, newPayload, passkeySig } from "../support/fixtures.ts";
import type { Harness } from "../support/harness.ts";
import { withApp } from "../support/in_process.ts";
import {
  addGoverned,
  authorizationOf,
  bodyOf,
  ed25519Signer,
  getRecord,
  newSigned,
  postApproval,
  postRejection,
} from "../support/governed.ts";
import type { Json } from "../support/record.ts";
import { storeTest } from "../support/stores.ts";
import { submitKit } from "../support/submit_kit.ts";
import { sleep } from "../support/time.ts";

/** Sends `text` as the body of `POST /intents` and expects a replay of `record`. */
async function expectReplay(h: Harness, text: string, record: Json): Promise<void> {
  const response = await h.submit(text);
  const body = await response.text();
  assert.equal(response.status, 200, body);
  assert.equal(response.headers.get("idempotent-replayed"), "true");
  assert.equal(
    response.headers.get("location"),
    `/intents/${encodeURIComponent(record.id as string)}`,
  );
  assert.equal(response.headers.get("content-type"), "application/json");
  const replayed = JSON.parse(body);
  assert.deepEqual(replayed, record);
  assert.deepEqual(replayed, await getRecord(h, record.id as string));
}

/** The same JSON value written otherwise: members in reverse order, with white space. */
function rewritten(value: unknown): string {
  const reorder = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(reorder);
    if (typeof v !== "object" || v === null) return v;
    return Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reorder(x)]));
  };
  return JSON.stringify(reorder(value), null, 2);
}

storeTest(
  "the same signed submission again is 200 with the record as it stands",
  async (store, t) => {
    await withApp({ store, env: { ALLOW_UNSIGNED: "true" } }, async (h) => {
      const kit = await submitKit(h);
      const p = kit.passkey;

      await t.step("both variants, every signed kind, written otherwise", async () => {
        const payload = () => newPayload(kit.templateId, { attrs: { fields: { n: 1e21 } } });
        const intent = () => newIntent(kit.policyId, { attrs: { fields: { s: "ü" } } });
        const bodies: unknown[] = [];
        bodies.push(signVariantA(payload(), kit.key), signVariantB(intent(), kit.key));
        const pa = payload();
        const ib = intent();
        bodies.push(variantABody(pa, await passkeySig(p, pa)));
        bodies.push(variantBBody(ib, await passkeySig(p, ib)));
        const signers = { [keyText(kit.key)]: 1, [keyText(kit.other)]: 1 };
        const multisigOf = (signed: Payload | Intent) =>
          multisigSignature({
            signers,
            threshold: 2,
            signatures: [ed25519Signature(signed, kit.key), ed25519Signature(signed, kit.other)],
          });
        const ma = payload();
        const mb = intent();
        bodies.push(variantABody(ma, multisigOf(ma)), variantBBody(mb, multisigOf(mb)));
        for (const body of bodies) {
          const created = await h.submit(body);
          const record = await created.json();
          assert.equal(created.status, 201, JSON.stringify(record));
          await expectReplay(h, JSON.stringify(body), record);
          await expectReplay(h, rewritten(body), record);
        }
      });

      await t.step("an Unsigned body, or another body for the id, is 409", async () => {
        const unsigned = unsignedVariantB(newIntent(kit.policyId));
        assert.equal((await h.submit(unsigned)).status, 201);
        await expectError(await h.submit(unsigned), 409, "intent_exists");
        const body = signVariantA(newPayload(kit.templateId), kit.key);
        assert.equal((await h.submit(body)).status, 201);
        const others = [
          signVariantA(body.payload, kit.other),
          signVariantA({ ...body.payload, attrs: { fields: {} } }, kit.key),
        ];
        for (const other of others) await expectError(await h.submit(other), 409, "intent_exists");
        // Signed over the id in another case: another body (the record keeps strings as sent).
        const uuid = newIntent(kit.policyId);
        const lower = signVariantB(uuid, kit.key);
        assert.equal((await h.submit(lower)).status, 201);
        const upper = signVariantB({ ...uuid, id: uuid.id.toUpperCase() }, kit.key);
        await expectError(await h.submit(upper), 409, "intent_exists");
      });

      await t.step("the checks before the id still come first", async () => {
        const body = signVariantA(newPayload(kit.templateId), kit.key);
        assert.equal((await h.submit(body)).status, 201);
        const forged = structuredClone(body);
        forged.signature = signVariantA({ ...body.payload, id: "other" }, kit.key).signature;
        await expectError(await h.submit(forged), 400, "invalid_signature");
        await expectError(await h.submit(JSON.stringify(body) + "x"), 400, "invalid_json");
        await expectError(
          await h.submit(JSON.stringify(body), { "content-type": "text/plain" }),
          415,
          "unsupported_media_type",
        );
      });
    });
  },
);

storeTest("a replay under a governed document shows the intent as it stands now", async (store) => {
  await withApp({ store }, async (h) => {
    const [a, b, c] = [ed25519Signer(), ed25519Signer(), ed25519Signer()];
    const policy = await addGoverned(h, "policy", authorizationOf([a, b, c], 2));
    const short = await addGoverned(
      h,
      "policy",
      authorizationOf([a, b, c], 2, {
        approval_window_s: 1,
      }),
    );
    const stored = async (doc: string) => {
      const signed = newSigned("policy", doc) as Payload;
      const body = bodyOf(signed, await a.sign(signed));
      const response = await h.submit(body);
      assert.equal(response.status, 202);
      return { signed, text: JSON.stringify(body), record: await response.json() as Json };
    };
    // Pending: the record as stored.
    const pending = await stored(policy);
    await expectReplay(h, pending.text, pending.record);
    // Accepted by an approval: the accepted record, not the stored one.
    const accepted = await stored(policy);
    await postApproval(h, accepted.signed.id, { signature: await b.sign(accepted.signed) });
    const acceptedNow = await getRecord(h, accepted.signed.id);
    assert.equal(acceptedNow.state, "accepted");
    await expectReplay(h, accepted.text, acceptedNow);
    // Rejected: b and c say no, one cannot reach 2.
    const rejected = await stored(policy);
    for (const signer of [b, c]) {
      await postRejection(h, rejected.signed.id, {
        signature: await signer.reject(rejected.signed),
      });
    }
    const rejectedNow = await getRecord(h, rejected.signed.id);
    assert.equal(rejectedNow.state, "rejected");
    await expectReplay(h, rejected.text, rejectedNow);
    // Expired: past its deadline it reads expired, whether or not the expiry was recorded.
    const expired = await stored(short);
    await sleep(1_100);
    const expiredNow = await getRecord(h, expired.signed.id);
    assert.equal(expiredNow.state, "expired");
    await expectReplay(h, expired.text, expiredNow);
  });
});
