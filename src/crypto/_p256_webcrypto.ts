/**
 * ECDSA P-256 / SHA-256 verification on Web Crypto, and the probe that
 * decides whether this runtime's Web Crypto can serve: it must support ECDSA
 * P-256 with SHA-256 and accept high-S signatures, as WebAuthn requires. The
 * imported key is kept with the decoded key object, because importing costs
 * about as much as a verify.
 * @module
 */

import { hexToBytes } from "@noble/curves/utils.js";
import type { P256PublicKey } from "./p256_public_key.ts";

/** Imported keys, kept as long as their decoded key object lives. */
const imported = new WeakMap<P256PublicKey, Promise<CryptoKey>>();

/** Imports an uncompressed SEC1 point as an ECDSA P-256 verification key. */
function importP256Key(uncompressed: Uint8Array): Promise<CryptoKey> {
  return crypto.subtle.importKey(
    "raw",
    // Uncompressed raw import is the one form every Web Crypto implementation accepts.
    uncompressed as Uint8Array<ArrayBuffer>,
    { name: "ECDSA", namedCurve: "P-256" },
    false, // never exported
    ["verify"],
  );
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
  let key = imported.get(publicKey);
  if (key === undefined) {
    const importing = key = importP256Key(publicKey.uncompressed);
    // A failed import must not stick: drop it so the next call retries.
    importing.catch(() => {
      if (imported.get(publicKey) === importing) imported.delete(publicKey);
    });
    imported.set(publicKey, importing);
  }
  return await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, await key, rs, message);
}

/** A verifier under probe: an uncompressed SEC1 key, the message and r ‖ s. */
export type P256ProbeVerify = (
  uncompressedKey: Uint8Array<ArrayBuffer>,
  message: Uint8Array<ArrayBuffer>,
  rs: Uint8Array<ArrayBuffer>,
) => Promise<boolean>;

/**
 * RFC 6979 §A.2.5, P-256 with SHA-256: the public key U = (Ux, Uy) and the
 * deterministic signatures of "sample" (s above n/2) and "test" (s below n/2).
 */
export const RFC6979_P256 = {
  publicKey: "04" +
    "60fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb6" +
    "7903fe1008b8bc99a41ae9e95628bc64f2f1b20c2d7e9f5177a3c294d4462299",
  sample: "efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716" +
    "f7cb1c942d657c41d436c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8",
  test: "f1abb023518351cd71d881567b1ea663ed3efcf6c5132b354f28d3b0b7d38367" +
    "019f4113742a2b14bd25926b49c649155f267e60d3814b4c0cc84250e46f0083",
} as const;

/**
 * True when `verify` accepts both RFC 6979 signatures (one high-S, one low-S)
 * and rejects the "sample" signature over "test". Any error counts as false.
 */
export async function verifiesLikeWebAuthn(verify: P256ProbeVerify): Promise<boolean> {
  const bytes = (hex: string) => hexToBytes(hex) as Uint8Array<ArrayBuffer>;
  const text = (s: string) => new TextEncoder().encode(s);
  const key = bytes(RFC6979_P256.publicKey);
  try {
    const highS = await verify(key, text("sample"), bytes(RFC6979_P256.sample));
    const lowS = await verify(key, text("test"), bytes(RFC6979_P256.test));
    const wrong = await verify(key, text("test"), bytes(RFC6979_P256.sample));
    return highS && lowS && !wrong;
  } catch {
    return false;
  }
}

/**
 * True when Web Crypto passes {@link verifiesLikeWebAuthn}; false when it
 * lacks ECDSA P-256 (import or verify throws) or gives another verdict.
 */
export function webCryptoVerifiesP256(): Promise<boolean> {
  return verifiesLikeWebAuthn(async (uncompressedKey, message, rs) => {
    const key = await importP256Key(uncompressedKey);
    return await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, key, rs, message);
  });
}
