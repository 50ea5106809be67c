/**
 * Strict Ed25519 verification on Web Crypto. Web Crypto checks S < L and the
 * cofactorless equation with encodings compared (`tests/unit/ed25519_test.ts`
 * holds every backend to the same vectors), but it accepts small-order keys
 * and R, so those rules are checked here first. The imported key is kept with
 * the decoded key object, so a kept key is imported once.
 * @module
 */

import { hasCanonicalY, hasSmallOrderY, isCanonicalS } from "./_ed25519_encoding.ts";
import type { Ed25519PublicKey } from "./ed25519_public_key.ts";

/** Imported keys, kept as long as their decoded key object lives. */
const imported = new WeakMap<Ed25519PublicKey, Promise<CryptoKey>>();

/** The imported key, or `null` when the key is not a point or has small order. */
function importPublicKey(publicKey: Ed25519PublicKey): Promise<CryptoKey> | null {
  if (!publicKey.isPoint || publicKey.isSmallOrder) return null;
  const cached = imported.get(publicKey);
  if (cached !== undefined) return cached;
  // Not extractable: the key is only ever used to verify.
  const key = crypto.subtle.importKey(
    "raw",
    publicKey.bytes.slice(),
    { name: "Ed25519" },
    false,
    ["verify"],
  );
  // A failed import must not stick: drop it so the next call retries.
  key.catch(() => {
    if (imported.get(publicKey) === key) imported.delete(publicKey);
  });
  imported.set(publicKey, key);
  return key;
}

/**
 * Verifies with libsodium's rules using Web Crypto for the equation.
 * Lengths are checked by the caller; `signature` must not change while this runs.
 */
export async function verifyWithWebCrypto(
  publicKey: Ed25519PublicKey,
  message: Uint8Array<ArrayBuffer>,
  signature: Uint8Array<ArrayBuffer>,
): Promise<boolean> {
  if (!isCanonicalS(signature)) return false;
  // R: canonical y and not of small order. An R off the curve, or with x = 0 and
  // the sign bit set (such R have small-order y anyway), never equals the
  // canonical encoding Web Crypto compares against.
  if (!hasCanonicalY(signature, 0) || hasSmallOrderY(signature, 0)) return false;
  const key = importPublicKey(publicKey);
  if (key === null) return false;
  return await crypto.subtle.verify("Ed25519", await key, signature, message);
}
