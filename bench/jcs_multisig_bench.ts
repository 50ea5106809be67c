/**
 * The per-request work besides the strict JSON read and single-key verify
 * (benchmarked in `ed25519_bench.ts` and `passkey_bench.ts`): JCS of a typical
 * intent, and a 3-signer Ed25519 multisig, decoded and verified as the
 * submit path does it.
 */

import { canonicalBytes } from "@intents/protocol/jcs";
import { decodeSignature } from "../src/domain/signature.ts";
import { verifyAuthorship, verifyContext } from "../src/domain/authorship.ts";
import {
  ed25519Signature,
  generateEd25519Key,
  type Intent,
  multisigSignature,
} from "../client/mod.ts";

/** A typical Variant B intent: a UUID, a policy id and a few business fields. */
const intent: Intent = {
  id: "7c0e2f5e-1f1a-4d7e-9a43-3c2b1d0e9f88",
  policy_id: "6HfDFDHLuS37kEwwzDq39utSWPkKriY1GkFC184uYXB",
  attrs: {
    fields: {
      amount: "1250.00",
      currency: "EUR",
      beneficiary: { name: "Ada Lovelace", iban: "DE89370400440532013000" },
      reference: "invoice 2025-0042",
      tags: ["urgent", "q1"],
    },
  },
};
const parsed = JSON.parse(JSON.stringify(intent));

Deno.bench("JCS of a typical intent (canonicalBytes)", { group: "jcs", baseline: true }, () => {
  canonicalBytes(parsed);
});

Deno.bench("JSON.stringify of the same intent, for scale", { group: "jcs" }, () => {
  JSON.stringify(parsed);
});

const keys = [generateEd25519Key(), generateEd25519Key(), generateEd25519Key()];
const multisig = JSON.parse(JSON.stringify(multisigSignature({
  signers: Object.fromEntries(keys.map((k) => [ed25519Signature(intent, k).Ed25519.pub_key, 1])),
  threshold: 3,
  signatures: keys.map((k) => ed25519Signature(intent, k)),
})));
const signed = canonicalBytes(parsed);
const ctx = verifyContext({
  rpIds: ["localhost"],
  origins: ["http://localhost:8000"],
  requireUserVerification: false,
});

Deno.bench(
  "3-signer multisig: decode and verify (warm key cache)",
  { group: "multisig" },
  async () => {
    const authorship = await verifyAuthorship(
      decodeSignature(multisig, "authorship.Signed", { keys: ctx.keys }),
      signed,
      ctx,
    );
    if (authorship.signers.length !== 3) throw new Error("multisig did not verify");
  },
);

Deno.bench("3-signer multisig: decode only", { group: "multisig" }, () => {
  decodeSignature(multisig, "authorship.Signed", { keys: ctx.keys });
});
