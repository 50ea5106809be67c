/**
 * Ed25519 and passkey signatures on `POST /intents` that do not verify are 400
 * `invalid_signature` naming the signature's path (docs/interface.md §4): another key,
 * a tampered payload, bytes other than the JCS form, and each passkey check.
 */

import assert from "node:assert/strict";
import { ed25519 } from "@noble/curves/ed25519.js";
import { base58 } from "@scure/base";
import { ed25519Signature, signVariantA } from "../../client/mod.ts";
import {
  expectCreated,
  expectError,
  keyText,
  newIntent,
  newPayload,
  passkeySig,
} from "../support/fixtures.ts";
import { withApp } from "../support/in_process.ts";
import { submitKit } from "../support/submit_kit.ts";

Deno.test("POST /intents refuses Ed25519 and passkey signatures that do not verify", async (t) => {
  await withApp({}, async (h) => {
    const { templateId, policyId, key, other, passkey, passkeyCompressed, invalidSignature } =
      await submitKit(h);

    await t.step("rejects an Ed25519 signature made with another key", async () => {
      const payload = newPayload(templateId);
      const signature = ed25519Signature(payload, other);
      signature.Ed25519.pub_key = keyText(key);
      await invalidSignature({ payload, signature }, "signature.Ed25519");
      const intent = newIntent(policyId);
      const signed = ed25519Signature(intent, other);
      signed.Ed25519.pub_key = keyText(key);
      await invalidSignature({ authorship: { Signed: signed }, intent }, "authorship.Signed");
    });

    await t.step("rejects a signature over a tampered payload", async () => {
      const body = signVariantA(newPayload(templateId, { attrs: { fields: { n: 1 } } }), key);
      body.payload.attrs = { fields: { n: 2 } };
      await invalidSignature(body, "signature.Ed25519");
    });

    await t.step("rejects an Ed25519 signature over non-JCS bytes", async () => {
      // Members out of JCS order and with white space: the same JSON value, other bytes.
      const payload = { template_id: templateId, id: `intent-${crypto.randomUUID()}` };
      const text = JSON.stringify(payload, null, 1);
      const signature = ed25519.sign(new TextEncoder().encode(text), key.secretKey);
      await invalidSignature({
        payload,
        signature: {
          Ed25519: { pub_key: keyText(key), signature: base58.encode(signature) },
        },
      }, "signature.Ed25519");
    });

    await t.step("verifies against the JCS form whatever the member order sent", async () => {
      const payload = newPayload(templateId, {
        attrs: { fields: { b: 1, a: [2, { d: 3, c: 4 }] } },
      });
      const signature = ed25519Signature(payload, key);
      const reordered = `{"signature":${JSON.stringify(signature)},"payload":{"template_id":${
        JSON.stringify(payload.template_id)
      },"attrs":{"fields":{"a":[2,{"c":4,"d":3}],"b":1}},"id":${JSON.stringify(payload.id)}}}`;
      const record = await expectCreated(await h.submit(reordered));
      assert.deepEqual(record.request, JSON.parse(reordered));
    });

    const passkeyNegatives: [string, Parameters<typeof passkeySig>[2], string][] = [
      ["from another origin", { origin: "https://evil.example" }, "origin"],
      [
        "with the wrong challenge",
        { challenge: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" },
        "challenge",
      ],
      ["with crossOrigin true", { crossOrigin: true }, "crossOrigin"],
      ["with the user-present flag clear", { flags: 0x04 }, "presence"],
      ["for another relying party", { rpId: "evil.example" }, "rpIdHash"],
      ["of another type", { type: "webauthn.create" }, "type"],
    ];

    for (const [name, options, reason] of passkeyNegatives) {
      await t.step(`rejects a passkey assertion ${name}`, async () => {
        const payload = newPayload(templateId);
        const signature = await passkeySig(passkey, payload, options);
        const message = await expectError(
          await h.submit({ payload, signature }),
          400,
          "invalid_signature",
          { mentions: "signature.Passkey" },
        );
        assert.ok(message.includes(reason), message);
        const intent = newIntent(policyId);
        const signed = await passkeySig(passkeyCompressed, intent, options);
        await invalidSignature({ authorship: { Signed: signed }, intent }, "authorship.Signed");
      });
    }

    await t.step("rejects a passkey signature by another key", async () => {
      const payload = newPayload(templateId);
      const signature = await passkeySig(passkey, payload);
      signature.Passkey.pub_key = base58.encode(passkeyCompressed.publicKey);
      await invalidSignature({ payload, signature }, "signature.Passkey");
    });
  });
});
