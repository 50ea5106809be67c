/**
 * Verifies a decoded signature over the signed bytes. A signature that does
 * not verify is refused with `invalid_signature`; the message says which
 * check failed and where, never what the input was.
 * @module
 */

import { ServiceError } from "../errors.ts";
import { verifyEd25519 } from "../crypto/ed25519.ts";
import { challengeText } from "@intents/protocol/signed";
import {
  type PasskeyPolicy,
  type PrecheckedPasskey,
  precheckPasskey,
  verifyPrechecked,
  withRpIdHashes,
} from "./passkey.ts";
import { checkPrimeOrder, type PublicKeyCache, publicKeyCache } from "./public_keys.ts";
import { fieldPath } from "./validate.ts";
import type {
  DecodedEd25519,
  DecodedMultisig,
  DecodedPasskey,
  DecodedSignature,
} from "./signature.ts";
import type { Authorship } from "./intent.ts";
import type { SignedBy } from "./governance.ts";

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

/**
 * The cheap checks of one single-key signature (a passkey's client data,
 * flags and rp id hash; nothing for Ed25519): the failure reason, or what its
 * {@link verifyPrepared} needs.
 */
function prepareSingle(
  sig: DecodedEd25519 | DecodedPasskey,
  signedBytes: Uint8Array,
  ctx: VerifyContext,
  challenge: string | undefined,
): { failure: string } | { prepared: PrecheckedPasskey | null } {
  if (sig.kind === "Ed25519") return { prepared: null };
  const checked = precheckPasskey(
    {
      authenticatorData: sig.authenticatorData,
      clientData: sig.clientData,
      publicKey: sig.publicKey,
      signature: sig.signature,
    },
    signedBytes,
    ctx.passkey,
    challenge,
  );
  return checked.ok ? { prepared: checked } : { failure: `${sig.path}: ${checked.reason}` };
}

/** The dear check of one single-key signature (Ed25519, or a passkey's ECDSA); the failure reason or null. */
async function verifyPrepared(
  sig: DecodedEd25519 | DecodedPasskey,
  prepared: PrecheckedPasskey | null,
  signedBytes: Uint8Array,
): Promise<string | null> {
  if (sig.kind === "Ed25519") {
    const ok = await verifyEd25519(sig.publicKey, signedBytes, sig.signature);
    return ok ? null : `${sig.path}: signature does not verify`;
  }
  const verdict = await verifyPrechecked(prepared!);
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
    /** By docs/interface.md §4; under a governed document its weights decide instead. */
    reached: boolean;
    /** The refusal when `reached` is false. */
    shortfall: string;
  };
}

/** The subgroup check of one signer's key (docs/interface.md §4), refused as the decoding was. */
function checkSignerKey(sig: DecodedMultisig, keyId: string, signersPath: string): void {
  const key = sig.keys.get(keyId);
  if (key === undefined) return;
  checkPrimeOrder(key, fieldPath(signersPath, sig.signers.get(keyId)!.keyText), "invalid_body");
}

/** Who made one verified signature, and what identifies the signature. */
function signedBy(sig: DecodedEd25519 | DecodedPasskey): SignedBy {
  const { keyId, path, signature } = sig;
  return sig.kind === "Ed25519" ? { kind: "Ed25519", keyId, path, signature } : {
    kind: "Passkey",
    keyId,
    path,
    signature,
    authenticatorData: sig.authenticatorData,
    clientData: sig.clientData,
  };
}

/**
 * Verifies a Multisig's entries, cheapest refusals first: every entry's key
 * a signer and no signer twice; then every passkey entry's cheap checks;
 * then the signatures in order, stopping at the first that does not verify;
 * each Ed25519 signer's subgroup check once its signature verified, and those
 * of the signers that did not sign last. A forged signature never pays for a
 * subgroup check, nor the entries after it for their verification.
 */
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
  // One challenge for every passkey entry: they sign the same bytes.
  const challenge = sig.signatures.some((s) => s.kind === "Passkey")
    ? challengeText(signedBytes)
    : undefined;
  const prepared = sig.signatures.map((entry) => {
    const step = prepareSingle(entry, signedBytes, ctx, challenge);
    if ("failure" in step) throw new ServiceError("invalid_signature", step.failure);
    return step.prepared;
  });
  const signersPath = fieldPath(sig.path, "pub_key", "signers");
  for (let i = 0; i < sig.signatures.length; i++) {
    const entry = sig.signatures[i];
    const failure = await verifyPrepared(entry, prepared[i], signedBytes);
    if (failure) throw new ServiceError("invalid_signature", failure);
    checkSignerKey(sig, entry.keyId, signersPath);
  }
  for (const keyId of sig.signers.keys()) {
    if (!seen.has(keyId)) checkSignerKey(sig, keyId, signersPath);
  }

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
  const step = prepareSingle(sig, signedBytes, ctx, undefined);
  const failure = "failure" in step
    ? step.failure
    : await verifyPrepared(sig, step.prepared, signedBytes);
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
