/**
 * Multisig on `POST /intents` (CONTRACT §4): malformed descriptors are 400
 * `invalid_body` (nesting, more than 16 signers or signatures, bad weights
 * and thresholds, one key named twice, no signers); entries by non-signers,
 * a signer signing twice, weights below the threshold and an entry that does
 * not verify are 400 `invalid_signature`.
 */

import { base58 } from "@scure/base";
import { ed25519Signature, generateEd25519Key, multisigSignature } from "../../client/mod.ts";
import {
  expectCreated,
  keyText,
  newIntent,
  newPayload,
  passkeySig,
  withHarness,
} from "../support/fixtures.ts";
import { compressed } from "../support/keys.ts";
import { submitKit } from "../support/submit_kit.ts";

Deno.test("POST /intents refuses malformed and unmet Multisigs", async (t) => {
  await withHarness({}, async (h) => {
    const { templateId, policyId, key, other, passkey, invalidBody, invalidSignature } =
      await submitKit(h);

    await t.step("rejects a Multisig nested in a Multisig", async () => {
      const payload = newPayload(templateId);
      const inner = multisigSignature({
        signers: { [keyText(key)]: 1 },
        threshold: 1,
        signatures: [ed25519Signature(payload, key)],
      });
      const outer = {
        Multisig: {
          pub_key: { signers: { [keyText(key)]: 1 }, threshold: 1 },
          signatures: [inner],
        },
      };
      await invalidBody({ payload, signature: outer }, "signature.Multisig.signatures[0]");
    });

    await t.step("rejects more than 16 signers or 16 signatures", async () => {
      const payload = newPayload(templateId);
      const keys = Array.from({ length: 17 }, () => generateEd25519Key());
      const signers = Object.fromEntries(keys.map((k) => [keyText(k), 1]));
      const many = multisigSignature({
        signers,
        threshold: 1,
        signatures: [ed25519Signature(payload, keys[0])],
      });
      await invalidBody({ payload, signature: many }, "signature.Multisig.pub_key.signers");

      const sixteen = Object.fromEntries(keys.slice(0, 16).map((k) => [keyText(k), 1]));
      const entries = keys.map((k) => ed25519Signature(payload, k));
      const tooManyEntries = multisigSignature({
        signers: sixteen,
        threshold: 1,
        signatures: entries,
      });
      await invalidBody({ payload, signature: tooManyEntries }, "signature.Multisig.signatures");

      const ok = multisigSignature({
        signers: sixteen,
        threshold: 16,
        signatures: entries.slice(0, 16),
      });
      await expectCreated(await h.submit({ payload, signature: ok }));
    });

    await t.step(
      "rejects zero, negative, fractional and unsafe weights and thresholds",
      async () => {
        const payload = newPayload(templateId);
        const entry = ed25519Signature(payload, key);
        const bodyWith = (weight: string, threshold: string) =>
          `{"payload":${JSON.stringify(payload)},"signature":{"Multisig":{"pub_key":{"signers":{"${
            keyText(key)
          }":${weight}},"threshold":${threshold}},"signatures":[${JSON.stringify(entry)}]}}}`;
        for (const weight of ["0", "-1", "1.5", "9.007199254740992e15", '"1"', "null"]) {
          await invalidBody(bodyWith(weight, "1"), "signature.Multisig.pub_key.signers");
        }
        for (const threshold of ["0", "-2", "0.5", "1e16", '"1"']) {
          await invalidBody(bodyWith("1", threshold), "signature.Multisig.pub_key.threshold");
        }
        await expectCreated(await h.submit(bodyWith("1", "1")));
      },
    );

    await t.step(
      "rejects a signer named twice, including compressed and uncompressed forms of one P-256 key",
      async () => {
        const payload = newPayload(templateId);
        const signature = multisigSignature({
          signers: { [base58.encode(passkey.publicKey)]: 1, [compressed(passkey)]: 1 },
          threshold: 1,
          signatures: [await passkeySig(passkey, payload)],
        });
        await invalidBody({ payload, signature }, "signature.Multisig.pub_key.signers");
      },
    );

    await t.step("rejects a Multisig with no signers", async () => {
      const payload = newPayload(templateId);
      const signature = multisigSignature({
        signers: {},
        threshold: 1,
        signatures: [ed25519Signature(payload, key)],
      });
      await invalidBody({ payload, signature }, "signature.Multisig.pub_key.signers");
    });

    await t.step("rejects a Multisig entry whose key is not a signer", async () => {
      const payload = newPayload(templateId);
      const signature = multisigSignature({
        signers: { [keyText(key)]: 5 },
        threshold: 1,
        signatures: [ed25519Signature(payload, key), ed25519Signature(payload, other)],
      });
      await invalidSignature({ payload, signature }, "signature.Multisig.signatures[1]");
    });

    await t.step("rejects a Multisig signer who signs twice", async () => {
      const payload = newPayload(templateId);
      const signature = multisigSignature({
        signers: { [keyText(key)]: 1, [compressed(passkey)]: 1 },
        threshold: 2,
        signatures: [await passkeySig(passkey, payload), await passkeySig(passkey, payload)],
      });
      await invalidSignature({ payload, signature }, "signature.Multisig.signatures[1]");
      const twiceEd = multisigSignature({
        signers: { [keyText(key)]: 1 },
        threshold: 2,
        signatures: [ed25519Signature(payload, key), ed25519Signature(payload, key)],
      });
      await invalidSignature({ payload, signature: twiceEd }, "signature.Multisig");
    });

    await t.step("rejects a Multisig whose signers do not reach the threshold", async () => {
      const payload = newPayload(templateId);
      const signature = multisigSignature({
        signers: { [keyText(key)]: 2, [keyText(other)]: 2 },
        threshold: 3,
        signatures: [ed25519Signature(payload, key)],
      });
      await invalidSignature({ payload, signature }, "signature.Multisig");
      const none = multisigSignature({
        signers: { [keyText(key)]: 2 },
        threshold: 1,
        signatures: [],
      });
      await invalidSignature({ payload, signature: none }, "signature.Multisig");
    });

    await t.step("rejects a Multisig with one entry that does not verify", async () => {
      const intent = newIntent(policyId);
      const bad = await passkeySig(passkey, intent, { origin: "https://evil.example" });
      const signature = multisigSignature({
        signers: { [keyText(key)]: 5, [base58.encode(passkey.publicKey)]: 1 },
        threshold: 5,
        signatures: [ed25519Signature(intent, key), bad],
      });
      await invalidSignature(
        { authorship: { Signed: signature }, intent },
        "authorship.Signed.Multisig.signatures[1]",
      );
    });
  });
});
