/**
 * Decides whether this runtime's `node:crypto` or Web Crypto can serve as the
 * Ed25519 backend: it must support Ed25519 and check the cofactorless
 * equation, like libsodium.
 * @module
 */

import { ed25519, ED25519_TORSION_SUBGROUP } from "@noble/curves/ed25519.js";
import { sha512 } from "@noble/hashes/sha2.js";
import { bytesToNumberLE, hexToBytes, numberToBytesLE } from "@noble/curves/utils.js";
import { verify as nodeVerify } from "node:crypto";
import { ed25519KeyObject } from "./_ed25519_node.ts";

/** RFC 8032 §7.1 TEST 1: public key, empty message, signature. */
const RFC8032_TEST1 = {
  publicKey: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
  signature:
    "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
};

/**
 * A signature that satisfies only the cofactored equation: A = [a]B and
 * R = [r]B + T with T of order 8, S = r + k·a mod L. Then [S]B − [k]A = R − T,
 * so the cofactorless check fails while [8]([S]B − [k]A − R) = O. A and R are
 * canonical and of large order, so only the equation can reject it.
 */
export function cofactoredOnlySignature(): {
  publicKey: Uint8Array<ArrayBuffer>;
  message: Uint8Array<ArrayBuffer>;
  signature: Uint8Array<ArrayBuffer>;
} {
  const { Point } = ed25519;
  const L = Point.CURVE().n;
  const fixedScalar = (label: string) =>
    bytesToNumberLE(sha512(new TextEncoder().encode(label))) % L;
  const a = fixedScalar("ed25519 probe: secret scalar");
  const r = fixedScalar("ed25519 probe: nonce");
  // zip215 false: strict decoding of noble's own torsion listing; index 3 has order 8.
  const t = Point.fromHex(ED25519_TORSION_SUBGROUP[3], false);
  const publicKey = Point.BASE.multiply(a).toBytes();
  const rBytes = Point.BASE.multiply(r).add(t).toBytes();
  const message = new TextEncoder().encode("passes only the cofactored equation");
  const h = sha512.create().update(rBytes).update(publicKey).update(message).digest();
  const k = bytesToNumberLE(h) % L;
  const s = (r + k * a) % L;
  const signature = new Uint8Array(64);
  signature.set(rBytes, 0);
  signature.set(numberToBytesLE(s, 32), 32);
  return { publicKey: new Uint8Array(publicKey), message, signature };
}

/**
 * True when Web Crypto verifies the RFC 8032 test signature and rejects the
 * cofactored-only signature. Any error (Ed25519 unsupported) counts as false.
 */
export async function webCryptoIsStrictEd25519(): Promise<boolean> {
  try {
    const verify = async (
      publicKey: Uint8Array<ArrayBuffer>,
      sig: Uint8Array<ArrayBuffer>,
      msg: Uint8Array<ArrayBuffer>,
    ) => {
      const key = await crypto.subtle.importKey("raw", publicKey, { name: "Ed25519" }, false, [
        "verify",
      ]);
      return await crypto.subtle.verify("Ed25519", key, sig, msg);
    };
    const valid = await verify(
      hexToBytes(RFC8032_TEST1.publicKey) as Uint8Array<ArrayBuffer>,
      hexToBytes(RFC8032_TEST1.signature) as Uint8Array<ArrayBuffer>,
      new Uint8Array(0),
    );
    const cofactored = cofactoredOnlySignature();
    const lax = await verify(cofactored.publicKey, cofactored.signature, cofactored.message);
    return valid && !lax;
  } catch {
    return false;
  }
}

/**
 * True when `node:crypto` verifies the RFC 8032 test signature and rejects the
 * cofactored-only signature. Any error (Ed25519 unsupported) counts as false.
 */
export function nodeCryptoIsStrictEd25519(): boolean {
  try {
    const verify = (publicKey: Uint8Array, sig: Uint8Array, msg: Uint8Array) =>
      nodeVerify(null, msg, ed25519KeyObject(publicKey), sig);
    const valid = verify(
      hexToBytes(RFC8032_TEST1.publicKey),
      hexToBytes(RFC8032_TEST1.signature),
      new Uint8Array(0),
    );
    const cofactored = cofactoredOnlySignature();
    const lax = verify(cofactored.publicKey, cofactored.signature, cofactored.message);
    return valid && !lax;
  } catch {
    return false;
  }
}
