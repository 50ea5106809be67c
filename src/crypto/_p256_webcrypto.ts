/**
 * ECDSA P-256 / SHA-256 verification on Web Crypto. The imported key is kept
 * with the decoded key object, because importing costs about as much as a
 * verify.
 * @module
 */

import type { P256PublicKey } from "./p256_public_key.ts";

/** Imported keys, kept as long as their decoded key object lives. */
const imported = new WeakMap<P256PublicKey, Promise<CryptoKey>>();

/** Imports an uncompressed SEC1 point as an ECDSA P-256 verification key. */
export function importP256Key(uncompressed: Uint8Array): Promise<CryptoKey> {
  return crypto.subtle.importKey(
    "raw",
    // Uncompressed raw import is the one form every Web Crypto implementation accepts.
    uncompressed as Uint8Array<ArrayBuffer>,
    { name: "ECDSA", namedCurve: "P-256" },
    false, // never exported
    ["verify"],
  );
}

/** The Web Crypto key for `publicKey`, imported on first use. */
function verificationKey(publicKey: P256PublicKey): Promise<CryptoKey> {
  const cached = imported.get(publicKey);
  if (cached !== undefined) return cached;
  const key = importP256Key(publicKey.uncompressed);
  // A failed import must not stick: drop it so the next call retries.
  key.catch(() => {
    if (imported.get(publicKey) === key) imported.delete(publicKey);
  });
  imported.set(publicKey, key);
  return key;
}

/**
 * Verifies `rs` (64 bytes, r ‖ s, each in [1, n − 1], from the strict DER
 * parser) over `message` with Web Crypto. Web Crypto's ECDSA takes raw r ‖ s
 * (IEEE P1363), hashes the message with SHA-256 itself and does not impose
 * low S, which is what WebAuthn needs.
 */
export async function verifyWithWebCrypto(
  publicKey: P256PublicKey,
  message: Uint8Array<ArrayBuffer>,
  rs: Uint8Array<ArrayBuffer>,
): Promise<boolean> {
  const key = await verificationKey(publicKey);
  return await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, key, rs, message);
}
