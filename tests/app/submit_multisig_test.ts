/**
 * Multisig on `POST /intents` (docs/interface.md §4): malformed descriptors are 400
 * `invalid_body` (nesting, more than 16 signers or signatures, bad weights
 * and thresholds, one key named twice, no signers); entries by non-signers,
 * a signer signing twice, weights below the threshold and an entry that does
 * not verify are 400 `invalid_signature`. An Ed25519 signer key outside the
 * prime-order subgroup is `invalid_body`: the holder of the secret of A can
 * sign under A + T (T of order 8) too, and would count as two signers.
 */

import assert from "node:assert/strict";
import { base58 } from "@scure/base";
import {
  ed25519Signature,
  generateEd25519Key,
  type Intent,
  multisigSignature,
  type Payload,
  signedBytes,
} from "../../client/mod.ts";
import {
  expectCreated,
  expectError,
  keyText,
  newIntent,
  newPayload,
  passkeySig,
} from "../support/fixtures.ts";
import { withApp } from "../support/in_process.ts";
import { compressed, torsionTwin } from "../support/keys.ts";
import { submitKit } from "../support/submit_kit.ts";

Deno.test("POST /intents refuses malformed and unmet Multisigs", async (t) => {
  await withApp({}, async (h) => {
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

    // ---- one secret, one signer ----

    /** A and A + T from one secret, with signatures under each over `value`. */
    const twins = (value: Payload | Intent) => {
      const a = generateEd25519Key();
      const twin = torsionTwin(a.secretKey);
      const twinText = base58.encode(twin.publicKey);
      const underTwin = {
        Ed25519: {
          pub_key: twinText,
          signature: base58.encode(twin.sign(signedBytes(value))),
        },
      };
      return { a, twinText, underA: ed25519Signature(value, a), underTwin };
    };

    /** Asserts the refusal of the A + T signer, named by its path, and of nothing else. */
    const outsideSubgroup = async (body: unknown, signersPath: string, twin: string, a: string) => {
      const message = await expectError(await h.submit(body), 400, "invalid_body", {
        mentions: [signersPath, twin.slice(0, 32)],
        notEcho: a.slice(0, 32),
      });
      assert.ok(message.startsWith(signersPath), message);
      assert.ok(message.endsWith(": is not in the prime-order subgroup"), message);
    };

    await t.step(
      "a signature under A + T made with the secret of A verifies on its own (201)",
      async () => {
        // The premise of the rule below: this is a valid signer that the secret of A controls.
        const payload = newPayload(templateId);
        const { twinText, underTwin } = twins(payload);
        const record = await expectCreated(await h.submit({ payload, signature: underTwin }));
        assert.deepEqual(record.authorship, { kind: "Ed25519", signers: [twinText] });
      },
    );

    await t.step(
      "refuses a 2-of-2 Multisig of A and A + T signed by the one secret of A",
      async () => {
        const payload = newPayload(templateId);
        const { a, twinText, underA, underTwin } = twins(payload);
        const signature = multisigSignature({
          signers: { [keyText(a)]: 1, [twinText]: 1 },
          threshold: 2,
          signatures: [underA, underTwin],
        });
        await outsideSubgroup(
          { payload, signature },
          "signature.Multisig.pub_key.signers",
          twinText,
          keyText(a),
        );
        const got = await h.fetch(`/intents/${payload.id}`, { headers: { authorization: h.auth } });
        await expectError(got, 404, "not_found");

        const intent = newIntent(policyId);
        const b = twins(intent);
        const signed = multisigSignature({
          signers: { [keyText(b.a)]: 1, [b.twinText]: 1 },
          threshold: 2,
          signatures: [b.underA, b.underTwin],
        });
        await outsideSubgroup(
          { authorship: { Signed: signed }, intent },
          "authorship.Signed.Multisig.pub_key.signers",
          b.twinText,
          keyText(b.a),
        );
      },
    );

    await t.step("refuses A + T as the one signer of a 1-of-1 Multisig", async () => {
      const payload = newPayload(templateId);
      const { a, twinText, underTwin } = twins(payload);
      const signature = multisigSignature({
        signers: { [twinText]: 1 },
        threshold: 1,
        signatures: [underTwin],
      });
      await outsideSubgroup(
        { payload, signature },
        "signature.Multisig.pub_key.signers",
        twinText,
        keyText(a),
      );
    });

    await t.step("still accepts a 2-of-2 Multisig of two prime-order keys", async () => {
      const payload = newPayload(templateId);
      const a = generateEd25519Key();
      const b = generateEd25519Key();
      const signature = multisigSignature({
        signers: { [keyText(a)]: 1, [keyText(b)]: 1 },
        threshold: 2,
        signatures: [ed25519Signature(payload, a), ed25519Signature(payload, b)],
      });
      const record = await expectCreated(await h.submit({ payload, signature }));
      const authorship = record.authorship as { kind: string; signers: string[] };
      assert.equal(authorship.kind, "Multisig");
      assert.deepEqual([...authorship.signers].sort(), [keyText(a), keyText(b)].sort());
    });
  });
});
