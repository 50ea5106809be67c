/**
 * Decoded P-256 public keys.
 * @module
 */

import { p256 } from "@noble/curves/nist.js";

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
 * import { p256 } from "@noble/curves/nist.js";
 *
 * const uncompressed = p256.getPublicKey(p256.utils.randomSecretKey(), false);
 * const { compressed } = decodeP256PublicKey(uncompressed); // compressed.length === 33
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
 * A decoded P-256 public key: the point in both SEC1 forms, checked once.
 * Backends keep what they derive from it (an imported Web Crypto key) with the
 * object, so a kept key (see the key cache of `src/domain/public_keys.ts`) is
 * decoded and imported once.
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
