/**
 * ECDSA P-256 / SHA-256 verification with noble (pure JavaScript), for
 * runtimes whose Web Crypto lacks ECDSA P-256.
 *
 * noble's `verify` takes the key as bytes and decodes it on every call
 * (`Point.fromBytes`); it has no form that takes a decoded point. So nothing
 * is kept per key: the key object's uncompressed form is passed, whose
 * decoding is a curve-equation check, where the compressed form would cost a
 * square root per call.
 * @module
 */

import { p256 } from "@noble/curves/nist.js";
import type { P256PublicKey } from "./p256_public_key.ts";

/**
 * Verifies `rs` (64 bytes, r ‖ s, each in [1, n − 1], from the strict DER
 * parser) over `message` with noble, with the verdicts of the Web Crypto path.
 */
export function verifyWithNoble(
  publicKey: P256PublicKey,
  message: Uint8Array,
  rs: Uint8Array,
): boolean {
  return p256.verify(rs, message, publicKey.uncompressed, {
    // The strict DER parser (der.ts) has already read the signature into r ‖ s.
    format: "compact",
    // Authenticators do not normalise s: a high-S signature is as valid as its low-S twin.
    lowS: false,
    // The message is the signed bytes: noble hashes them with SHA-256 (ES256).
    prehash: true,
  });
}
