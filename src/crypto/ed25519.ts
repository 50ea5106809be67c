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

import { isPointEncoding } from "./_ed25519_encoding.ts";
import { bytesToHex } from "./_ed25519_hex.ts";
import { LruCache } from "./_ed25519_lru.ts";
import { verifyWithNoble } from "./_ed25519_noble.ts";
import { verifyWithNode } from "./_ed25519_node.ts";
import { verifyWithWebCrypto } from "./_ed25519_webcrypto.ts";
import { nodeCryptoIsStrictEd25519, webCryptoIsStrictEd25519 } from "./_ed25519_probe.ts";

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
    if (nodeCryptoIsStrictEd25519()) return "node";
    return await webCryptoIsStrictEd25519() ? "webcrypto" : "noble";
  })().then((backend) => probedBackend = backend);
  return defaultBackend;
}

/** Point-encoding verdicts by hex key; bounded so fresh keys cannot grow memory. */
const pointVerdicts = new LruCache<boolean>(1024);

/**
 * True when `bytes` is 32 bytes that decode (RFC 8032 §5.1.3: canonical y < p,
 * no x = 0 with the sign bit set) to a point on the curve. Small-order points
 * are accepted here; {@link verifyEd25519} rejects them.
 *
 * @param bytes candidate point encoding.
 * @returns whether it is a strict encoding of a curve point.
 * @example
 * ```ts
 * isEd25519PointEncoding(new Uint8Array(32)); // true: y = 0 is a point of order 4
 * ```
 */
export function isEd25519PointEncoding(bytes: Uint8Array): boolean {
  if (!(bytes instanceof Uint8Array) || bytes.length !== 32) return false;
  // The square-root test is a 255-bit modular power (~100 µs): remember the
  // verdict per key, as signers submit again and again.
  const id = bytesToHex(bytes);
  let verdict = pointVerdicts.get(id);
  if (verdict === undefined) {
    verdict = isPointEncoding(bytes);
    pointVerdicts.set(id, verdict);
  }
  return verdict;
}

/**
 * Strict Ed25519 verification (see the module documentation for the rules).
 *
 * @param publicKey 32-byte public key A.
 * @param message the signed bytes M.
 * @param signature 64-byte signature R ‖ S.
 * @param options `backend` forces a backend; by default {@link ed25519DefaultBackend}.
 * @returns true when the signature verifies, false for anything else.
 * @throws {TypeError} when `publicKey` is not 32 bytes, `signature` is not 64
 *   bytes, or an argument is not a `Uint8Array` (the promise rejects).
 * @example
 * ```ts
 * if (!(await verifyEd25519(publicKey, message, signature))) {
 *   throw badRequest("invalid_signature", "signature: does not verify");
 * }
 * ```
 */
export async function verifyEd25519(
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
  options: { backend?: Ed25519Backend } = {},
): Promise<boolean> {
  expectBytes("publicKey", publicKey, 32);
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
      return await verifyWithWebCrypto(publicKey.slice(), message.slice(), signature.slice());
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
