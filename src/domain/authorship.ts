/**
 * Verifies a decoded signature over the signed bytes. A signature that does
 * not verify is refused with `invalid_signature`; the message says which
 * check failed and where, never what the input was.
 * @module
 */

import { ServiceError } from "../errors.ts";
import { verifyEd25519 } from "../crypto/ed25519.ts";
import { type PasskeyPolicy, verifyPasskey, withRpIdHashes } from "./passkey.ts";
import { type PublicKeyCache, publicKeyCache } from "./public_keys.ts";
import type {
  DecodedEd25519,
  DecodedMultisig,
  DecodedPasskey,
  DecodedSignature,
} from "./signature.ts";
import type { Authorship } from "./intent.ts";
import type { SignedBy } from "./governance.ts";
import { signatureMaterial } from "./signature_digest.ts";

/** What the verifiers need besides the signature: the passkey policy, and one thread's caches. */
export interface VerifyContext {
  passkey: PasskeyPolicy;
  /** Decoded public keys, by their text (see `public_keys.ts`). */
  keys: PublicKeyCache;
}

/**
 * A verify context with caches of its own: one per thread that verifies (the
 * serving thread, each worker), built where the thread starts.
 *
 * @example
 * ```ts
 * const ctx = verifyContext({
 *   rpIds: ["localhost"],
 *   origins: ["http://localhost:8000"],
 *   requireUserVerification: false,
 * });
 * ```
 */
export function verifyContext(passkey: PasskeyPolicy): VerifyContext {
  return { passkey: withRpIdHashes(passkey), keys: publicKeyCache() };
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

/** What a verified signature says: who signed, and for a Multisig its own descriptor. */
export interface Verified {
  /** The authorship to record: the kind and the keys that signed, as sent. */
  authorship: Authorship;
  /** Each signature that verified, in order. */
  signedBy: SignedBy[];
  /** For a Multisig: its descriptor, and whether its signers' weights reach its threshold. */
  multisig?: {
    signers: Map<string, { keyText: string; weight: number }>;
    threshold: number;
    path: string;
    /**
     * The rule of docs/interface.md §4; under a governed document the
     * document's weights decide instead.
     */
    reached: boolean;
    /** The refusal when `reached` is false. */
    shortfall: string;
  };
}

/** Who made one verified signature, and what identifies the signature. */
function signedBy(sig: DecodedEd25519 | DecodedPasskey): SignedBy {
  return { keyId: sig.keyId, kind: sig.kind, path: sig.path, material: signatureMaterial(sig) };
}

async function checkMultisig(
  sig: DecodedMultisig,
  signedBytes: Uint8Array,
  ctx: VerifyContext,
): Promise<Verified> {
  const seen = new Set<string>();
  for (const entry of sig.signatures) {
    if (!sig.signers.has(entry.keyId)) {
      throw new ServiceError(
        "invalid_signature",
        `${entry.path}: the key is not a signer of the multisig`,
      );
    }
    if (seen.has(entry.keyId)) {
      throw new ServiceError("invalid_signature", `${entry.path}: this signer has already signed`);
    }
    seen.add(entry.keyId);
  }
  const failures = await Promise.all(sig.signatures.map((s) => checkSingle(s, signedBytes, ctx)));
  const failure = failures.find((f) => f !== null);
  if (failure) throw new ServiceError("invalid_signature", failure);

  // BigInt: sixteen safe-integer weights may add up past 2^53.
  let total = 0n;
  for (const keyId of seen) total += BigInt(sig.signers.get(keyId)!.weight);
  return {
    authorship: {
      kind: "Multisig",
      signers: [...seen].map((keyId) => sig.signers.get(keyId)!.keyText),
    },
    signedBy: sig.signatures.map((entry) => signedBy(entry)),
    multisig: {
      signers: sig.signers,
      threshold: sig.threshold,
      path: sig.path,
      reached: total >= BigInt(sig.threshold),
      shortfall:
        `${sig.path}: the signers' weights add up to ${total}, below the threshold ${sig.threshold}`,
    },
  };
}

/**
 * Verifies `sig` over `signedBytes`. A Multisig's own threshold is not
 * enforced here (see {@link Verified.multisig}): under a governed document the
 * document's weights decide.
 *
 * @returns who signed.
 * @throws {ServiceError} `invalid_signature` when a signature does not verify.
 */
export async function verifySignature(
  sig: DecodedSignature,
  signedBytes: Uint8Array,
  ctx: VerifyContext,
): Promise<Verified> {
  if (sig.kind === "Multisig") return await checkMultisig(sig, signedBytes, ctx);
  const failure = await checkSingle(sig, signedBytes, ctx);
  if (failure) throw new ServiceError("invalid_signature", failure);
  return {
    authorship: { kind: sig.kind, signers: [sig.keyText] },
    signedBy: [signedBy(sig)],
  };
}

/**
 * Verifies `sig` over `signedBytes` under docs/interface.md §4's rules alone (a Multisig's
 * signers must reach its threshold).
 *
 * @returns the authorship to record: the kind and the keys that signed.
 * @throws {ServiceError} `invalid_signature` when it does not verify.
 */
export async function verifyAuthorship(
  sig: DecodedSignature,
  signedBytes: Uint8Array,
  ctx: VerifyContext,
): Promise<Authorship> {
  const verified = await verifySignature(sig, signedBytes, ctx);
  if (verified.multisig && !verified.multisig.reached) {
    throw new ServiceError("invalid_signature", verified.multisig.shortfall);
  }
  return verified.authorship;
}
