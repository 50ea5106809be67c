/**
 * The order of checks on `POST /intents` (docs/interface.md §4): 400s (signature,
 * missing template or policy, `unsigned_not_permitted`) before 409
 * `intent_exists`, so a request whose authorship does not verify never learns
 * whether an id exists; and a refused request stores nothing.
 */

import assert from "node:assert/strict";
import {
  ed25519Signature,
  signVariantA,
  signVariantB,
  unsignedVariantB,
} from "../../client/mod.ts";
import { expectCreated, expectError, keyText, newIntent, newPayload } from "../support/fixtures.ts";
import { withApp } from "../support/in_process.ts";
import { submitKit } from "../support/submit_kit.ts";

Deno.test("POST /intents: the order of checks, 409, and nothing stored on a refusal", async (t) => {
  await withApp({}, async (h) => {
    const { templateId, policyId, key, other, invalidSignature } = await submitKit(h);

    await t.step(
      "answers the same body again with 200, another body for its id with 409",
      async () => {
        const body = signVariantA(newPayload(templateId), key);
        await expectCreated(await h.submit(body));
        const again = await h.submit(body);
        assert.equal(again.status, 200);
        assert.equal(again.headers.get("idempotent-replayed"), "true");
        await again.body?.cancel();
        const byOther = signVariantA(body.payload, other);
        await expectError(await h.submit(byOther), 409, "intent_exists");
      },
    );

    await t.step(
      "answers a bad signature for an existing id with 400 invalid_signature, not 409",
      async () => {
        const body = signVariantA(newPayload(templateId), key);
        await expectCreated(await h.submit(body));
        const forged = signVariantA(body.payload, other);
        (forged.signature as { Ed25519: { pub_key: string } }).Ed25519.pub_key = keyText(key);
        await expectError(await h.submit(forged), 400, "invalid_signature");

        const intentBody = signVariantB(newIntent(policyId), key);
        await expectCreated(await h.submit(intentBody));
        const tampered = structuredClone(intentBody);
        tampered.intent.attrs = { fields: { x: 1 } };
        await expectError(await h.submit(tampered), 400, "invalid_signature");
      },
    );

    await t.step(
      "answers a missing template with a valid signature for an existing id with 400",
      async () => {
        const body = signVariantA(newPayload(templateId), key);
        await expectCreated(await h.submit(body));
        const missing = signVariantA({ ...body.payload, template_id: "NoSuchTemplate" }, key);
        await expectError(await h.submit(missing), 400, "template_not_found", {
          mentions: "payload.template_id",
        });
      },
    );

    await t.step("rejects an unknown template with 400 template_not_found", async () => {
      const body = signVariantA(newPayload("11111111111111111111111111111111"), key);
      await expectError(await h.submit(body), 400, "template_not_found", {
        mentions: "payload.template_id",
      });
    });

    await t.step("rejects an unknown policy with 400 policy_not_found", async () => {
      const body = signVariantB(newIntent("NoSuchPolicy"), key);
      await expectError(await h.submit(body), 400, "policy_not_found", {
        mentions: "intent.policy_id",
      });
    });

    await t.step("does not accept a policy id as a template id, nor the reverse", async () => {
      await expectError(
        await h.submit(signVariantA(newPayload(policyId), key)),
        400,
        "template_not_found",
      );
      await expectError(
        await h.submit(signVariantB(newIntent(templateId), key)),
        400,
        "policy_not_found",
      );
    });

    await t.step("rejects Unsigned authorship by default with unsigned_not_permitted", async () => {
      const body = unsignedVariantB(newIntent(policyId));
      await expectError(await h.submit(body), 400, "unsigned_not_permitted", {
        mentions: "authorship",
      });
      const got = await h.fetch(`/intents/${body.intent.id}`, {
        headers: { authorization: h.auth },
      });
      assert.equal(got.status, 404);
      await got.body?.cancel();
    });

    await t.step("stores nothing for a request that fails", async () => {
      const payload = newPayload(templateId);
      const signature = ed25519Signature(payload, other);
      signature.Ed25519.pub_key = keyText(key);
      await invalidSignature({ payload, signature });
      const got = await h.fetch(`/intents/${payload.id}`, { headers: { authorization: h.auth } });
      await expectError(got, 404, "not_found");
      await expectCreated(await h.submit(signVariantA(payload, key)));
    });
  });
});
