/**
 * P-256 public keys and ECDSA P-256 / SHA-256 verification through Web Crypto.
 *
 * noble decodes and validates points (Web Crypto cannot import compressed
 * keys everywhere); Web Crypto does the verification itself. A decoded key
 * keeps its imported Web Crypto key, because importing costs about as much
 * as a verify.
 * @module
 */

import { p256 } from "@noble/curves/nist.js";
import { parseDerEcdsaSignature } from "./der.ts";

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

/**
 * A decoded P-256 public key: the point in both SEC1 forms, checked once. A
 * kept key (see the key cache of `src/domain/public_keys.ts`) is imported once.
 */
export class P256PublicKey {
  /** The 33-byte compressed SEC1 form: equal points have equal compressed forms. */
  readonly compressed: Uint8Array;
  /** The 65-byte uncompressed SEC1 form. */
  readonly uncompressed: Uint8Array;

  /**
   * @param bytes a SEC1 point, compressed (33 bytes) or uncompressed (65 bytes).
   * @throws {RangeError} when the bytes are not a valid point (see {@link decodeP256PublicKey}).
   */
  constructor(bytes: Uint8Array) {
    const { compressed, uncompressed } = decodeP256PublicKey(bytes);
    this.compressed = compressed;
    this.uncompressed = uncompressed;
  }
}

/** Imported Web Crypto keys, kept as long as their decoded key object lives. */
const imported = new WeakMap<P256PublicKey, Promise<CryptoKey>>();

/** The Web Crypto key for `publicKey`, imported on first use. */
function verificationKey(publicKey: P256PublicKey): Promise<CryptoKey> {
  let key = imported.get(publicKey);
  if (key === undefined) {
    key = crypto.subtle.importKey(
      "raw",
      publicKey.uncompressed as Uint8Array<ArrayBuffer>,
      // Uncompressed raw import is the one form every Web Crypto implementation accepts.
      { name: "ECDSA", namedCurve: "P-256" },
      false, // never exported
      ["verify"],
    );
    const pending = key;
    // A failed import must not stick: drop it so the next call retries.
    pending.catch(() => {
      if (imported.get(publicKey) === pending) imported.delete(publicKey);
    });
    imported.set(publicKey, pending);
  }
  return key;
}

/**
 * Verifies an ECDSA P-256 / SHA-256 signature in ASN.1 DER over `message`.
 * High-S signatures are accepted: authenticators emit them about half the time.
 *
 * @param publicKey a decoded key, or a SEC1 point (compressed or uncompressed) decoded for this call.
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
  publicKey: P256PublicKey | Uint8Array,
  message: Uint8Array,
  derSignature: Uint8Array,
): Promise<boolean> {
  const decoded = publicKey instanceof P256PublicKey ? publicKey : new P256PublicKey(publicKey);
  const key = await verificationKey(decoded);
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
