/**
 * P-256 public keys and ECDSA P-256 / SHA-256 verification through Web Crypto.
 *
 * noble decodes and validates points (Web Crypto cannot import compressed
 * keys everywhere); Web Crypto does the verification itself. Imported keys are
 * kept in a bounded LRU cache because importing costs about as much as a verify.
 * @module
 */

import { p256 } from "@noble/curves/nist.js";
import { parseDerEcdsaSignature } from "./der.ts";

/** How many imported keys are kept; bounded so hostile traffic cannot grow memory. */
const KEY_CACHE_LIMIT = 1024;

/** Imported verification keys by the public key bytes as given (hex). */
const keyCache = new Map<string, CryptoKey>();

/**
 * Decodes a SEC1 P-256 public key and returns both encodings.
 *
 * @param bytes 33-byte compressed (`02`/`03` ‖ x) or 65-byte uncompressed (`04` ‖ x ‖ y) point.
 * @returns the point in compressed and uncompressed SEC1 form.
 * @throws {RangeError} when the bytes are not a valid point on the curve, use another
 * length or prefix, or encode the point at infinity.
 *
 * @example
 * ```ts
 * const { compressed } = decodeP256PublicKey(uncompressedKey); // compressed.length === 33
 * ```
 */
export function decodeP256PublicKey(
  bytes: Uint8Array,
): { compressed: Uint8Array; uncompressed: Uint8Array } {
  if (!(bytes instanceof Uint8Array) || (bytes.length !== 33 && bytes.length !== 65)) {
    throw new RangeError("Invalid P-256 public key: expected 33 or 65 bytes");
  }
  let point;
  try {
    // fromBytes checks the prefix, coordinates < p and the curve equation (SEC 1 §2.3.4, §3.2.2);
    // infinity has no encoding in noble's default P-256, so it cannot be decoded at all.
    point = p256.Point.fromBytes(bytes);
  } catch {
    throw new RangeError("Invalid P-256 public key: not a point on the curve");
  }
  return { compressed: point.toBytes(true), uncompressed: point.toBytes(false) };
}

function toHex(bytes: Uint8Array): string {
  let hex = "";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return hex;
}

/** Returns the cached Web Crypto key for `publicKey`, decoding and importing it on a miss. */
async function verificationKey(publicKey: Uint8Array): Promise<CryptoKey> {
  const id = toHex(publicKey);
  const cached = keyCache.get(id);
  if (cached) {
    // Re-insert so Map order is least recently used first.
    keyCache.delete(id);
    keyCache.set(id, cached);
    return cached;
  }
  const { uncompressed } = decodeP256PublicKey(publicKey);
  const key = await crypto.subtle.importKey(
    "raw",
    uncompressed as Uint8Array<ArrayBuffer>,
    // Uncompressed raw import is the one form every Web Crypto implementation accepts.
    { name: "ECDSA", namedCurve: "P-256" },
    false, // never exported
    ["verify"],
  );
  keyCache.set(id, key);
  if (keyCache.size > KEY_CACHE_LIMIT) {
    keyCache.delete(keyCache.keys().next().value!);
  }
  return key;
}

/**
 * Verifies an ECDSA P-256 / SHA-256 signature in ASN.1 DER over `message`.
 * High-S signatures are accepted: authenticators emit them about half the time.
 *
 * @param publicKey SEC1 P-256 public key, compressed or uncompressed.
 * @param message the signed bytes; hashed with SHA-256 here.
 * @param derSignature the signature as strict DER.
 * @returns `true` when the signature verifies; `false` when it is not strict DER, has
 * `r` or `s` out of range, or does not verify.
 * @throws {RangeError} when `publicKey` is not a valid P-256 point.
 *
 * @example
 * ```ts
 * if (!(await verifyP256(publicKey, message, signature))) throw new Error("bad signature");
 * ```
 */
export async function verifyP256(
  publicKey: Uint8Array,
  message: Uint8Array,
  derSignature: Uint8Array,
): Promise<boolean> {
  const key = await verificationKey(publicKey);
  let rs: Uint8Array;
  try {
    rs = parseDerEcdsaSignature(derSignature);
  } catch {
    return false;
  }
  return await crypto.subtle.verify(
    // Web Crypto's ECDSA takes raw r || s (IEEE P1363) and hashes the message itself;
    // it does not impose low S, which is what WebAuthn needs.
    { name: "ECDSA", hash: "SHA-256" },
    key,
    rs as Uint8Array<ArrayBuffer>,
    message as Uint8Array<ArrayBuffer>,
  );
}
