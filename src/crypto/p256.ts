/**
 * ECDSA P-256 / SHA-256 verification of WebAuthn signatures (ES256), identical
 * on every backend:
 *
 * - the signature is strict ASN.1 DER (`der.ts`), with r and s in [1, n − 1];
 * - high S is accepted: authenticators do not normalise s;
 * - the key is a SEC1 point, compressed or uncompressed, decoded and checked
 *   once by {@link P256PublicKey}.
 *
 * Web Crypto verifies when it supports ECDSA P-256; noble (pure JavaScript) is
 * the fallback. Both receive the same r ‖ s from the one DER parser.
 * @module
 */

import { p256 } from "@noble/curves/nist.js";
import { decodeP256PublicKey, P256PublicKey } from "./p256_public_key.ts";
import { parseDerEcdsaSignature } from "./der.ts";
import { verifyWithWebCrypto, webCryptoVerifiesP256 } from "./_p256_webcrypto.ts";

export { decodeP256PublicKey, P256PublicKey };

/** Where the verification is computed. */
export type P256Backend = "webcrypto" | "noble";

let defaultBackend: Promise<P256Backend> | undefined;
/** The default backend once probed, so verification need not wait for the probe again. */
let probedBackend: P256Backend | undefined;

/**
 * The backend {@link verifyP256} uses by default, probed once, lazily:
 * "webcrypto" when Web Crypto verifies a fixed RFC 6979 high-S and low-S
 * signature and rejects one over another message, else "noble".
 *
 * @returns the default backend.
 */
export function p256DefaultBackend(): Promise<P256Backend> {
  defaultBackend ??= webCryptoVerifiesP256()
    .then((native): P256Backend => native ? "webcrypto" : "noble")
    .then((backend) => probedBackend = backend);
  return defaultBackend;
}

/**
 * Verifies an ECDSA P-256 / SHA-256 signature in ASN.1 DER over `message`.
 * High-S signatures are accepted: authenticators emit them about half the time.
 *
 * @param publicKey a decoded key, or a SEC1 point (compressed or uncompressed) decoded for this call.
 * @param message the signed bytes; hashed with SHA-256 here.
 * @param derSignature the signature as strict DER.
 * @param options `backend` forces a backend; by default {@link p256DefaultBackend}.
 * @returns `true` when the signature verifies; `false` when it is not strict DER, has
 * `r` or `s` out of range, or does not verify.
 * @throws {RangeError} when `publicKey` is not a valid P-256 point.
 * @throws {TypeError} when `message` is not a `Uint8Array` or the backend is unknown.
 *
 * @example
 * ```ts
 * import { p256 } from "@noble/curves/nist.js";
 *
 * const secretKey = p256.utils.randomSecretKey();
 * const message = new TextEncoder().encode("hello");
 * // What an authenticator emits: SHA-256 prehashed, DER, s not normalised.
 * const signature = p256.sign(message, secretKey, { prehash: true, lowS: false, format: "der" });
 * await verifyP256(p256.getPublicKey(secretKey, false), message, signature); // true
 * ```
 */
export async function verifyP256(
  publicKey: P256PublicKey | Uint8Array,
  message: Uint8Array,
  derSignature: Uint8Array,
  options: { backend?: P256Backend } = {},
): Promise<boolean> {
  const decoded = publicKey instanceof P256PublicKey ? publicKey : new P256PublicKey(publicKey);
  if (!(message instanceof Uint8Array)) {
    throw new TypeError("Cannot verify P-256: message must be a Uint8Array");
  }
  let rs: Uint8Array;
  try {
    rs = parseDerEcdsaSignature(derSignature);
  } catch {
    return false;
  }
  const backend = options.backend ?? probedBackend ?? await p256DefaultBackend();
  switch (backend) {
    case "noble":
      // noble decodes the key at every call and keeps nothing per key: the uncompressed
      // form costs a curve-equation check, where the compressed one would cost a square root.
      return p256.verify(rs, message, decoded.uncompressed, {
        // The strict DER parser has already read the signature into r ‖ s.
        format: "compact",
        // Authenticators do not normalise s: a high-S signature is as valid as its low-S twin.
        lowS: false,
        // The message is the signed bytes: noble hashes them with SHA-256 (ES256).
        prehash: true,
      });
    case "webcrypto":
      // A copy of the message: Web Crypto reads it after the key import is awaited,
      // and the verdict must be on the bytes as they were at the call.
      return await verifyWithWebCrypto(decoded, message.slice(), rs as Uint8Array<ArrayBuffer>);
    default:
      throw new TypeError(`Cannot verify P-256: unknown backend "${String(backend)}"`);
  }
}
