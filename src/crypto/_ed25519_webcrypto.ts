/**
 * Strict Ed25519 verification on Web Crypto. Web Crypto checks S < L and the
 * cofactorless equation with encodings compared (measured on Deno 2.9), but it
 * accepts small-order keys and R, so those rules are checked here first, with
 * the per-key work (checks and key import) cached.
 * @module
 */

import { LruCache } from "./_ed25519_lru.ts";
import { bytesToHex } from "./_ed25519_hex.ts";
import {
  hasCanonicalY,
  hasSmallOrderY,
  isCanonicalS,
  isPointEncoding,
} from "./_ed25519_encoding.ts";

/** Imported keys by hex; `null` for keys that can never verify. */
const keyCache = new LruCache<Promise<CryptoKey> | null>(1024);

/** The imported key, or `null` when `publicKey` is not canonical, not on the curve, or of small order. */
function importPublicKey(publicKey: Uint8Array): Promise<CryptoKey> | null {
  const id = bytesToHex(publicKey);
  const cached = keyCache.get(id);
  if (cached !== undefined) return cached;
  if (!isPointEncoding(publicKey) || hasSmallOrderY(publicKey)) {
    keyCache.set(id, null);
    return null;
  }
  // Not extractable: the key is only ever used to verify.
  const imported = crypto.subtle.importKey(
    "raw",
    publicKey.slice(),
    { name: "Ed25519" },
    false,
    ["verify"],
  );
  // A failed import must not stick: drop it so the next call retries.
  imported.catch(() => {
    if (keyCache.get(id) === imported) keyCache.delete(id);
  });
  keyCache.set(id, imported);
  return imported;
}

/**
 * Verifies with libsodium's rules using Web Crypto for the equation.
 * Lengths are checked by the caller; `signature` must not change while this runs.
 */
export async function verifyWithWebCrypto(
  publicKey: Uint8Array<ArrayBuffer>,
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
