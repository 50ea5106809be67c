/**
 * Decoded Ed25519 public keys.
 * @module
 */

import { ed25519 } from "@noble/curves/ed25519.js";
import { hasSmallOrderY, isPointEncoding } from "./_ed25519_encoding.ts";

/**
 * A decoded Ed25519 public key: its 32 bytes and what is known of the point,
 * checked once. Backends keep what they derive from it (an imported key, a
 * decoded point) with the object, so a key that is kept (see the key cache of
 * `src/domain/public_keys.ts`) is decoded and imported once.
 */
export class Ed25519PublicKey {
  /** The 32 bytes, a private copy. */
  readonly bytes: Uint8Array;
  /** True when the bytes are a strict RFC 8032 §5.1.3 encoding of a curve point. */
  readonly isPoint: boolean;
  /** True for a point of small order (order dividing 8): such a key never verifies. */
  readonly isSmallOrder: boolean;
  #primeOrder: boolean | undefined;

  /**
   * @param bytes the 32-byte encoding.
   * @throws {TypeError} when `bytes` is not a 32-byte `Uint8Array`.
   */
  constructor(bytes: Uint8Array) {
    if (!(bytes instanceof Uint8Array) || bytes.length !== 32) {
      throw new TypeError("Cannot decode Ed25519 public key: expected 32 bytes");
    }
    this.bytes = bytes.slice();
    // The square-root test is a 255-bit modular power: done once per key object.
    this.isPoint = isPointEncoding(this.bytes);
    this.isSmallOrder = this.isPoint && hasSmallOrderY(this.bytes);
  }

  /**
   * True when the point lies in the prime-order subgroup ([L]A is the
   * identity): then no other key differs from it by a torsion point, so one
   * secret key cannot stand for two signers. Computed once (a scalar
   * multiplication, far dearer than a lookup).
   */
  get isPrimeOrder(): boolean {
    if (this.#primeOrder === undefined) {
      // zip215 false: strict RFC 8032 decoding, as everywhere in this service.
      this.#primeOrder = this.isPoint &&
        ed25519.Point.fromBytes(this.bytes, false).isTorsionFree();
    }
    return this.#primeOrder;
  }
}
