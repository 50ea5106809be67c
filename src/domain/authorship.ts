/**
 * Verifies a decoded signature over the signed bytes. A signature that does
 * not verify is a 400 `invalid_signature`; the message says which check
 * failed and where, never what the input was.
 * @module
 */

import { badRequest } from "../errors.ts";
import { verifyEd25519 } from "../crypto/ed25519.ts";
import { type PasskeyPolicy, verifyPasskey } from "./passkey.ts";
import type {
  DecodedEd25519,
  DecodedMultisig,
  DecodedPasskey,
  DecodedSignature,
} from "./signature.ts";
import type { Authorship } from "./intent.ts";

/** What the verifiers need besides the signature. */
export interface VerifyContext {
  passkey: PasskeyPolicy;
}

/** Verifies one single-key signature; returns the failure reason or null. */
async function checkSingle(
  sig: DecodedEd25519 | DecodedPasskey,
  signedBytes: Uint8Array,
  ctx: VerifyContext,
): Promise<string | null> {
  if (sig.kind === "Ed25519") {
    const ok = await verifyEd25519(sig.publicKey, signedBytes, sig.signature);
    return ok ? null : `${sig.path}: signature does not verify`;
  }
  const verdict = await verifyPasskey(
    {
      authenticatorData: sig.authenticatorData,
      clientData: sig.clientData,
      publicKey: sig.publicKey,
      signature: sig.signature,
    },
    signedBytes,
    ctx.passkey,
  );
  return verdict.ok ? null : `${sig.path}: ${verdict.reason}`;
}

async function checkMultisig(
  sig: DecodedMultisig,
  signedBytes: Uint8Array,
  ctx: VerifyContext,
): Promise<string[]> {
  const seen = new Set<string>();
  for (const entry of sig.signatures) {
    if (!sig.signers.has(entry.keyId)) {
      throw badRequest(
        "invalid_signature",
        `${entry.path}: the key is not a signer of the multisig`,
      );
    }
    if (seen.has(entry.keyId)) {
      throw badRequest("invalid_signature", `${entry.path}: this signer has already signed`);
    }
    seen.add(entry.keyId);
  }
  const failures = await Promise.all(sig.signatures.map((s) => checkSingle(s, signedBytes, ctx)));
  const failure = failures.find((f) => f !== null);
  if (failure) throw badRequest("invalid_signature", failure);

  // BigInt: sixteen safe-integer weights may add up past 2^53.
  let total = 0n;
  for (const keyId of seen) total += BigInt(sig.signers.get(keyId)!.weight);
  if (total < BigInt(sig.threshold)) {
    throw badRequest(
      "invalid_signature",
      `${sig.path}: the signers' weights add up to ${total}, below the threshold ${sig.threshold}`,
    );
  }
  return [...seen].map((keyId) => sig.signers.get(keyId)!.keyText);
}

/**
 * Verifies `sig` over `signedBytes`.
 *
 * @returns the authorship to record: the kind and the keys that signed.
 * @throws {ServiceError} 400 `invalid_signature` when it does not verify.
 */
export async function verifyAuthorship(
  sig: DecodedSignature,
  signedBytes: Uint8Array,
  ctx: VerifyContext,
): Promise<Authorship> {
  if (sig.kind === "Multisig") {
    return { kind: "Multisig", signers: await checkMultisig(sig, signedBytes, ctx) };
  }
  const failure = await checkSingle(sig, signedBytes, ctx);
  if (failure) throw badRequest("invalid_signature", failure);
  return { kind: sig.kind, signers: [sig.keyText] };
}
