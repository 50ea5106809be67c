/**
 * `POST /intents` accepts both variants (docs/interface.md §4) with each signature
 * kind, and Variant B `Unsigned` where the operator permits it; each 201
 * record has the contract's shape and reads back the same from
 * `GET /intents/{id}`. Also the passkey user-verified flag when required.
 * Each on a KV file and over KV Connect.
 */

import assert from "node:assert/strict";
import { base58 } from "@scure/base";
import {
  ed25519Signature,
  generateEd25519Key,
  multisigSignature,
  type Signature,
  signVariantA,
  signVariantB,
  unsignedVariantB,
} from "../../client/mod.ts";
import {
  expectCreated,
  expectError,
  keyText,
  newIntent,
  newPayload,
  passkeySig,
  SoftwarePasskey,
} from "../support/fixtures.ts";
import { withApp } from "../support/in_process.ts";
import { compressed } from "../support/keys.ts";
import { expectRecord, type Json } from "../support/record.ts";
import { storeTest } from "../support/stores.ts";
import { submitKit } from "../support/submit_kit.ts";

storeTest("POST /intents accepts each variant with each signature kind", async (store, t) => {
  await withApp({ store }, async (h) => {
    const { templateId, policyId, key, other, passkey, passkeyCompressed } = await submitKit(h);

    await t.step("accepts Variant A signed with Ed25519", async () => {
      const payload = newPayload(templateId, {
        attrs: { fields: { amount: "12.50", nested: { list: [1, 2.5, null, true] } } },
      });
      const body = signVariantA(payload, key);
      await expectRecord(h, await h.submit(body), body as unknown as Json, {
        variant: "A",
        ref: templateId,
        kind: "Ed25519",
        signers: [keyText(key)],
      });
    });

    await t.step("accepts Variant A signed with a passkey (uncompressed key)", async () => {
      const payload = newPayload(templateId);
      const signature = await passkeySig(passkey, payload);
      assert.equal(base58.decode(signature.Passkey.pub_key).length, 65);
      const body = { payload, signature };
      await expectRecord(h, await h.submit(body), body, {
        variant: "A",
        ref: templateId,
        kind: "Passkey",
        signers: [signature.Passkey.pub_key],
      });
    });

    await t.step("accepts Variant A signed with a passkey (compressed key)", async () => {
      const payload = newPayload(templateId);
      const signature = await passkeySig(passkeyCompressed, payload);
      assert.equal(base58.decode(signature.Passkey.pub_key).length, 33);
      const body = { payload, signature };
      await expectRecord(h, await h.submit(body), body, {
        variant: "A",
        ref: templateId,
        kind: "Passkey",
        signers: [signature.Passkey.pub_key],
      });
    });

    await t.step("accepts a passkey assertion without crossOrigin and with UV clear", async () => {
      const payload = newPayload(templateId);
      const signature = await passkeySig(passkey, payload, {
        crossOrigin: undefined,
        flags: 0x01,
      });
      const body = { payload, signature };
      await expectRecord(h, await h.submit(body), body, {
        variant: "A",
        ref: templateId,
        kind: "Passkey",
        signers: [signature.Passkey.pub_key],
      });
    });

    await t.step(
      "accepts Variant A Multisig of mixed Ed25519 and passkey entries meeting the threshold",
      async () => {
        const payload = newPayload(templateId, { attrs: { fields: {} } });
        const absent = generateEd25519Key();
        const signature = multisigSignature({
          signers: { [keyText(key)]: 1, [compressed(passkey)]: 2, [keyText(absent)]: 5 },
          threshold: 3,
          signatures: [ed25519Signature(payload, key), await passkeySig(passkey, payload)],
        });
        const body = { payload, signature };
        await expectRecord(h, await h.submit(body), body, {
          variant: "A",
          ref: templateId,
          kind: "Multisig",
          signers: [keyText(key), compressed(passkey)],
        });
      },
    );

    await t.step("accepts Variant B signed with Ed25519", async () => {
      const intent = newIntent(policyId, { attrs: { fields: { note: "ünïcødé ✓ 😀" } } });
      const body = signVariantB(intent, key);
      await expectRecord(h, await h.submit(body), body as unknown as Json, {
        variant: "B",
        ref: policyId,
        kind: "Ed25519",
        signers: [keyText(key)],
      });
    });

    await t.step("accepts Variant B signed with a passkey", async () => {
      const intent = newIntent(policyId);
      const signature = await passkeySig(passkeyCompressed, intent);
      const body = { authorship: { Signed: signature }, intent };
      await expectRecord(h, await h.submit(body), body, {
        variant: "B",
        ref: policyId,
        kind: "Passkey",
        signers: [signature.Passkey.pub_key],
      });
    });

    await t.step("accepts Variant B signed with a Multisig", async () => {
      const intent = newIntent(policyId);
      const signature = multisigSignature({
        signers: { [keyText(key)]: 2, [keyText(other)]: 2, [base58.encode(passkey.publicKey)]: 1 },
        threshold: 5,
        signatures: [
          ed25519Signature(intent, other),
          await passkeySig(passkey, intent),
          ed25519Signature(intent, key),
        ],
      });
      const body = { authorship: { Signed: signature }, intent };
      await expectRecord(h, await h.submit(body), body, {
        variant: "B",
        ref: policyId,
        kind: "Multisig",
        signers: [keyText(key), keyText(other), base58.encode(passkey.publicKey)],
      });
    });
  });
});

storeTest(
  "POST /intents with ALLOW_UNSIGNED=true and PASSKEY_REQUIRE_UV=true",
  async (store, t) => {
    await withApp(
      { env: { ALLOW_UNSIGNED: "true", PASSKEY_REQUIRE_UV: "true" }, store },
      async (h) => {
        const policyId = await h.newPolicy();
        const templateId = await h.newTemplate();
        const passkey = await SoftwarePasskey.create();

        await t.step("accepts Variant B Unsigned", async () => {
          const body = unsignedVariantB(newIntent(policyId, { attrs: { fields: { a: 1 } } }));
          await expectRecord(h, await h.submit(body), body as unknown as Json, {
            variant: "B",
            ref: policyId,
            kind: "Unsigned",
            signers: [],
          });
        });

        await t.step("still checks the policy of an Unsigned intent", async () => {
          const body = unsignedVariantB(newIntent("NoSuchPolicy"));
          await expectError(await h.submit(body), 400, "policy_not_found");
        });

        await t.step("rejects a second Unsigned intent with the same id with 409", async () => {
          const body = unsignedVariantB(newIntent(policyId));
          await expectCreated(await h.submit(body));
          await expectError(await h.submit(body), 409, "intent_exists");
        });

        await t.step("has no Unsigned form in Variant A", async () => {
          const payload = newPayload(templateId);
          await expectError(
            await h.submit({ payload, signature: "Unsigned" }),
            400,
            "invalid_body",
            { mentions: "signature" },
          );
        });

        await t.step("rejects a passkey assertion with the user-verified flag clear", async () => {
          const payload = newPayload(templateId);
          const signature = await passkeySig(passkey, payload, { flags: 0x01 });
          const message = await expectError(
            await h.submit({ payload, signature }),
            400,
            "invalid_signature",
            { mentions: "signature.Passkey" },
          );
          assert.match(message, /verif/);
        });

        await t.step("accepts a passkey assertion with the user-verified flag set", async () => {
          const payload = newPayload(templateId);
          const signature: Signature = await passkeySig(passkey, payload, { flags: 0x05 });
          await expectCreated(await h.submit({ payload, signature }));
        });
      },
    );
  },
);
