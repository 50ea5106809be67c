/**
 * Strict Ed25519 signature verification (RFC 8032 with libsodium's rules),
 * identical on every runtime and backend:
 *
 * - S < L (canonical S);
 * - A and R are canonical encodings (y < p, not x = 0 with the sign bit set);
 * - neither A nor R has small order (order dividing 8);
 * - the cofactorless equation: [S]B − [k]A, encoded, equals the R bytes, with
 *   k = SHA-512(R ‖ A ‖ M) mod L.
 *
 * Web Crypto and `node:crypto` alone accept the identity-key forgery
 * (A = R = identity, S = 0) and noble's `ed25519.verify` checks the cofactored
 * equation, so every backend adds the missing checks itself.
 * @module
 */

import { Ed25519PublicKey } from "./ed25519_public_key.ts";
import { verifyWithNoble } from "./_ed25519_noble.ts";
import {
  nodeCryptoIsStrictEd25519,
  verifyWithNode,
  verifyWithWebCrypto,
  webCryptoIsStrictEd25519,
} from "./_ed25519_native.ts";

export { Ed25519PublicKey };

/** Where the verification equation is computed. */
export type Ed25519Backend = "node" | "webcrypto" | "noble";

let defaultBackend: Promise<Ed25519Backend> | undefined;
/** The default backend once probed, so verification need not wait for the probe again. */
let probedBackend: Ed25519Backend | undefined;

/**
 * The backend {@link verifyEd25519} uses by default, probed once, lazily:
 * "node" when this runtime's `node:crypto` verifies Ed25519 natively (on the
 * calling thread, the cheapest), else "webcrypto" when Web Crypto does (on a
 * thread pool), else "noble" (pure JavaScript). A native backend qualifies
 * when it verifies a fixed RFC 8032 signature and rejects a signature valid
 * only under the cofactored equation.
 *
 * @returns the default backend.
 */
export function ed25519DefaultBackend(): Promise<Ed25519Backend> {
  defaultBackend ??= (async (): Promise<Ed25519Backend> => {
    if (await nodeCryptoIsStrictEd25519()) return "node";
    return await webCryptoIsStrictEd25519() ? "webcrypto" : "noble";
  })().then((backend) => probedBackend = backend);
  return defaultBackend;
}

/**
 * Strict Ed25519 verification (see the module documentation for the rules).
 *
 * @param publicKey the public key A: a decoded key, or its 32 bytes (decoded for this call).
 * @param message the signed bytes M.
 * @param signature 64-byte signature R ‖ S.
 * @param options `backend` forces a backend; by default {@link ed25519DefaultBackend}.
 * @returns true when the signature verifies, false for anything else.
 * @throws {TypeError} when `publicKey` is not 32 bytes, `signature` is not 64
 *   bytes, or an argument is not a `Uint8Array` (the promise rejects).
 * @example
 * ```ts
 * import { ed25519 } from "@noble/curves/ed25519.js";
 *
 * const secretKey = ed25519.utils.randomSecretKey();
 * const message = new TextEncoder().encode("hello");
 * const signature = ed25519.sign(message, secretKey);
 * await verifyEd25519(ed25519.getPublicKey(secretKey), message, signature); // true
 * ```
 */
export async function verifyEd25519(
  publicKey: Ed25519PublicKey | Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
  options: { backend?: Ed25519Backend } = {},
): Promise<boolean> {
  if (!(publicKey instanceof Ed25519PublicKey)) {
    expectBytes("publicKey", publicKey, 32);
    publicKey = new Ed25519PublicKey(publicKey);
  }
  expectBytes("message", message);
  expectBytes("signature", signature, 64);
  const backend = options.backend ?? probedBackend ?? await ed25519DefaultBackend();
  switch (backend) {
    // Synchronous: no copies needed.
    case "node":
      return verifyWithNode(publicKey, message, signature);
    case "noble":
      return verifyWithNoble(publicKey, message, signature);
    case "webcrypto":
      // Copies: the checks and the Web Crypto call must see the same bytes even
      // if the caller reuses its buffers while this awaits.
      return await verifyWithWebCrypto(publicKey, message.slice(), signature.slice());
    default:
      throw new TypeError(`Cannot verify Ed25519: unknown backend "${String(backend)}"`);
  }
}

function expectBytes(name: string, value: unknown, length?: number): void {
  if (!(value instanceof Uint8Array)) {
    throw new TypeError(`Cannot verify Ed25519: ${name} must be a Uint8Array`);
  }
  if (length !== undefined && value.length !== length) {
    throw new TypeError(
      `Cannot verify Ed25519: ${name} must be ${length} bytes, got ${value.length}`,
    );
  }
}
