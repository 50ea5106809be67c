/**
 * The binary fields of `POST /intents` (docs/interface.md §3): bad base58, wrong
 * lengths and keys that are not curve points are 400 `invalid_body` naming
 * the field, without echoing the input.
 */

import { base58 } from "@scure/base";
import { ed25519Signature, multisigSignature } from "../../client/mod.ts";
import { newPayload, passkeySig } from "../support/fixtures.ts";
import { withApp } from "../support/in_process.ts";
import {
  invalidCompressedP256,
  invalidEd25519Point,
  uncompressedOffCurve,
} from "../support/keys.ts";
import type { Json } from "../support/record.ts";
import { submitKit } from "../support/submit_kit.ts";

Deno.test("POST /intents refuses bad encodings of keys and signatures with invalid_body", async (t) => {
  await withApp({}, async (h) => {
    const { templateId, key, passkey, goodA, goodB, invalidBody } = await submitKit(h);

    await t.step("rejects bad base58 in each binary field, without echoing it", async () => {
      const bad = "0OIl0OIl";
      const a = goodA() as { signature: { Ed25519: Json } };
      a.signature.Ed25519.pub_key = bad;
      await invalidBody(a, "signature.Ed25519.pub_key", bad);
      const a2 = goodA() as { signature: { Ed25519: Json } };
      a2.signature.Ed25519.signature = bad;
      await invalidBody(a2, "signature.Ed25519.signature", bad);
      for (const field of ["authenticator_data", "pub_key", "signature"]) {
        const payload = newPayload(templateId);
        const pk = await passkeySig(passkey, payload) as unknown as { Passkey: Json };
        pk.Passkey[field] = bad;
        await invalidBody({ payload, signature: pk }, `signature.Passkey.${field}`, bad);
      }
      const b = goodB() as { authorship: { Signed: { Ed25519: Json } } };
      b.authorship.Signed.Ed25519.pub_key = bad;
      await invalidBody(b, "authorship.Signed.Ed25519.pub_key", bad);
    });

    await t.step("rejects wrong key and signature lengths", async () => {
      const a = goodA() as { signature: { Ed25519: Json } };
      a.signature.Ed25519.pub_key = base58.encode(new Uint8Array(31).fill(7));
      await invalidBody(a, "signature.Ed25519.pub_key");
      const a2 = goodA() as { signature: { Ed25519: Json } };
      a2.signature.Ed25519.pub_key = base58.encode(new Uint8Array(33).fill(7));
      await invalidBody(a2, "signature.Ed25519.pub_key");
      const a3 = goodA() as { signature: { Ed25519: Json } };
      const sig = base58.decode(a3.signature.Ed25519.signature as string);
      a3.signature.Ed25519.signature = base58.encode(sig.subarray(0, 63));
      await invalidBody(a3, "signature.Ed25519.signature");
      const payload = newPayload(templateId);
      const pk = await passkeySig(passkey, payload) as unknown as { Passkey: Json };
      pk.Passkey.pub_key = base58.encode(passkey.publicKey.subarray(0, 64));
      await invalidBody({ payload, signature: pk }, "signature.Passkey.pub_key");
    });

    await t.step("rejects public keys that are not valid points", async () => {
      const a = goodA() as { signature: { Ed25519: Json } };
      a.signature.Ed25519.pub_key = base58.encode(invalidEd25519Point());
      await invalidBody(a, "signature.Ed25519.pub_key");
      for (const point of [uncompressedOffCurve(), invalidCompressedP256()]) {
        const payload = newPayload(templateId);
        const pk = await passkeySig(passkey, payload) as unknown as { Passkey: Json };
        pk.Passkey.pub_key = base58.encode(point);
        await invalidBody({ payload, signature: pk }, "signature.Passkey.pub_key");
      }
      const payload = newPayload(templateId);
      const ms = multisigSignature({
        signers: { [base58.encode(uncompressedOffCurve())]: 1 },
        threshold: 1,
        signatures: [ed25519Signature(payload, key)],
      });
      await invalidBody({ payload, signature: ms }, "signature.Multisig.pub_key.signers");
    });
  });
});
